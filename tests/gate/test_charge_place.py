"""Where the charge runs: right before the terminal it only marks the call and `Gate.run`
charges it once the chain returns; with a stage between them (a client span) it wraps
them as a coroutine. Both places must leave the same record: a result under every budget
passes uncopied, one over it is shaped, and a call that never reached the terminal
(refused by resolve) or failed there is not charged at all. Driven in memory: a real
`Gate` from a real config, its upstream a real `Connection` over a list of frames.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from sidecar.catalog import Catalog, CatalogEntry
from sidecar.config import parse_config
from sidecar.gate import Gate, Next, ToolCall
from sidecar.upstream import Connection
from sidecar.upstream.channel import Outgoing

WAIT = 5.0


class Wire:
    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []
        self.sent = asyncio.Event()

    def send(self, message: Outgoing) -> None:
        self.frames.append(json.loads(message.frame))
        self.sent.set()


class Quiet:
    def upstream_notification(self, conn: Connection, frame: object) -> None: ...

    def upstream_request(self, conn: Connection, frame: object) -> None: ...


class OneUpstream:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.upstreams: dict[str, Any] = {}

    def get(self, alias: str) -> OneUpstream | None:
        return self if alias == "f" else None

    def ready_connection(self) -> Connection:
        return self.conn

    def starting(self, alias: str) -> bool:
        return False


async def _span(call: ToolCall, call_next: Next) -> ToolCall:
    """A stage between the charge and the terminal, as a client span is."""
    return await call_next(call)


def _gate(tmp_path: Path, wrapped: bool) -> tuple[Gate, Connection, Wire]:
    config = parse_config({"bot": {"id": "bot", "engine": "claude"}, "budgets": {"resultChars": 200},
                           "mcpServers": {"f": {"command": "unused"}}}, {})
    wire = Wire()
    conn = Connection("f", wire, Quiet())
    gate = Gate(config, OneUpstream(conn))  # type: ignore[arg-type]
    entry = CatalogEntry("f__echo", "f", "echo", {"name": "f__echo", "inputSchema": {"type": "object"}})
    gate.catalog = Catalog((entry,), (), {"f__echo": entry}, {}, {}, 0, 0)
    if wrapped:
        gate.around_call(_span)
    return gate, conn, wire


async def _run(gate: Gate, conn: Connection, wire: Wire, name: str, answer: dict[str, Any] | None) -> ToolCall:
    call = ToolCall(name=name, arguments={})
    running = asyncio.create_task(gate.run(call))
    if answer is not None:
        await asyncio.wait_for(wire.sent.wait(), WAIT)
        conn.feed(msgspec.json.encode({"jsonrpc": "2.0", "id": wire.frames[-1]["id"], **answer}))
    return await asyncio.wait_for(running, WAIT)


def _record(call: ToolCall) -> tuple[Any, ...]:
    return (call.outcome, call.charge, call.bytes_in, call.bytes_out, call.handle is not None, call.charge_due)


SMALL = {"result": {"content": [{"type": "text", "text": "hi"}]}}
LARGE = {"result": {"content": [{"type": "text", "text": "x" * 5000}]}}
FAILED = {"error": {"code": -32000, "message": "no"}}


@pytest.mark.parametrize("wrapped", [False, True], ids=["after the chain", "wrapping the terminal"])
async def test_each_place_charges_alike(tmp_path: Path, wrapped: bool) -> None:
    gate, conn, wire = _gate(tmp_path, wrapped)
    small = await _run(gate, conn, wire, "f__echo", SMALL)
    size = len(msgspec.json.encode(SMALL["result"]))
    assert _record(small) == ("completed", "pass", size, size, False, False)
    assert bytes(small.result or b"") == msgspec.json.encode(SMALL["result"])  # passed as it came
    large = await _run(gate, conn, wire, "f__echo", LARGE)
    assert large.outcome == "completed" and large.charge not in ("", "pass") and not large.charge_due
    assert large.bytes_in > 5000 and large.bytes_out < large.bytes_in
    failed = await _run(gate, conn, wire, "f__echo", FAILED)
    assert _record(failed) == ("failed", "", 0, 0, False, False)  # a failed call passes uncharged
    unknown = await _run(gate, conn, wire, "f__nope", None)
    assert _record(unknown) == ("failed", "", 0, 0, False, False)  # never reached the terminal


@pytest.mark.parametrize("wrapped", [False, True], ids=["after the chain", "wrapping the terminal"])
async def test_a_call_resolve_completed_itself_is_not_charged(tmp_path: Path, wrapped: bool) -> None:
    """A compactly listed tool called with arguments that do not fit is answered by resolve
    (a tool error, completed) before the charge's place: no charge, as before."""
    gate, conn, wire = _gate(tmp_path, wrapped)
    strict = CatalogEntry("f__echo", "f", "echo", {"name": "f__echo", "inputSchema": {
        "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}})
    gate.catalog = Catalog((strict,), (), {"f__echo": strict}, {}, {}, 0, 0)
    gate.listing = msgspec.structs.replace(gate.listing, compact=frozenset({"f__echo"}))
    refused = await _run(gate, conn, wire, "f__echo", None)
    assert _record(refused) == ("completed", "", 0, 0, False, False) and wire.frames == []
    assert b"do not fit its input schema" in bytes(refused.result or b"")
