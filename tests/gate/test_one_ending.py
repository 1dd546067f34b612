"""The gate's one ending, driven in memory: a real `Gate` from a real config, its one
upstream a real `Connection` whose transport is a list of frames, no process, no socket.

Each test counts the endings (`ToolCall.complete`, `_finish` and `overrule`), the audit lines and the
observer's sightings, and asks for exactly one of each whatever the stages do: end the
call, forget to, raise a `RuntimeError` before or after the ending, or be cancelled
while the upstream hangs.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from sidecar.catalog import Catalog, CatalogEntry
from sidecar.config import SidecarConfig, parse_config
from sidecar.errors import CallCancelled, UpstreamError
from sidecar.gate import Gate, Next, ToolCall
from sidecar.gate.answer import call_answer, error_body
from sidecar.gate.call import StageFault
from sidecar.redact import Redactor
from sidecar.upstream import Connection
from sidecar.upstream.channel import Outgoing

WAIT = 5.0  # every wait is bounded: a broken chain fails the test, it does not hang it
SECRET = "s3cr3t-Token-0123456789"


class Wire:
    """The upstream's side of the connection: frames the gate sent, one event per frame."""

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
    """What the gate asks of the pool, for one ready upstream `f` on an in-memory connection."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.upstreams: dict[str, Any] = {}

    def get(self, alias: str) -> OneUpstream | None:
        return self if alias == "f" else None

    def ready_connection(self) -> Connection:
        return self.conn

    def starting(self, alias: str) -> bool:
        return False


class Rig:
    def __init__(self, tmp_path: Path) -> None:
        self.audit_file = tmp_path / "audit.jsonl"
        self.config: SidecarConfig = parse_config({
            "bot": {"id": "bot", "engine": "claude"}, "audit": {"file": str(self.audit_file)},
            "mcpServers": {"f": {"command": "unused", "env": {"API_TOKEN": SECRET}}},
        }, {})
        self.wire = Wire()
        self.conn = Connection("f", self.wire, Quiet())
        self.gate = Gate(self.config, OneUpstream(self.conn))  # type: ignore[arg-type]
        entry = CatalogEntry("f__echo", "f", "echo", {"name": "f__echo", "inputSchema": {"type": "object"}})
        self.gate.catalog = Catalog((entry,), (), {"f__echo": entry}, {}, {}, 0, 0)
        self.seen: list[ToolCall] = []
        self.gate.observe(self.seen.append)

    def audit(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.audit_file.read_text().splitlines()]

    async def answer(self, frame: dict[str, Any]) -> None:
        """Wait for the gate's request upstream, then answer it under its id."""
        await asyncio.wait_for(self.wire.sent.wait(), WAIT)
        request = self.wire.frames[-1]
        self.conn.feed(msgspec.json.encode({"jsonrpc": "2.0", "id": request["id"], **frame}))


@pytest.fixture
def rig(tmp_path: Path) -> Rig:
    return Rig(tmp_path)


@pytest.fixture
def endings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every ending of every call, as it happens (complete, fail, overrule: `complete` ends
    a call itself, `fail` through `_finish`)."""
    seen: list[str] = []
    finish, complete, overrule = ToolCall._finish, ToolCall.complete, ToolCall.overrule

    def counted_finish(call: ToolCall, outcome: Any) -> ToolCall:
        seen.append(outcome)
        return finish(call, outcome)

    def counted_complete(call: ToolCall, result: Any) -> ToolCall:
        seen.append("completed")
        return complete(call, result)

    def counted_overrule(call: ToolCall, fault: StageFault) -> ToolCall:
        seen.append("overruled")
        return overrule(call, fault)

    monkeypatch.setattr(ToolCall, "_finish", counted_finish)
    monkeypatch.setattr(ToolCall, "complete", counted_complete)
    monkeypatch.setattr(ToolCall, "overrule", counted_overrule)
    return seen


def a_call() -> ToolCall:
    return ToolCall(name="f__echo", arguments={"text": "hi"})


async def test_a_completed_call_ends_once_and_is_recorded_once(rig: Rig, endings: list[str]) -> None:
    call = a_call()
    running = asyncio.create_task(rig.gate.run(call))
    await rig.answer({"result": {"content": [{"type": "text", "text": "hi"}]}})
    await asyncio.wait_for(running, WAIT)
    assert endings == ["completed"] and rig.seen == [call]
    assert [line["outcome"] for line in rig.audit()] == ["completed"]
    assert bytes(call_answer(call, rig.gate.redact)) == b'{"content":[{"type":"text","text":"hi"}]}'


async def test_a_stage_that_raises_fails_the_call_once_and_is_recorded(rig: Rig, endings: list[str]) -> None:
    async def broken(call: ToolCall, call_next: Next) -> ToolCall:
        raise RuntimeError("a bug in a stage")

    rig.gate.around_call(broken)
    call = await asyncio.wait_for(rig.gate.run(a_call()), WAIT)
    assert endings == ["failed"] and rig.seen == [call]
    assert isinstance(call.error, StageFault) and rig.wire.frames == []  # nothing went upstream
    [line] = rig.audit()
    assert line["outcome"] == "failed" and line["error"] == "StageFault" and line["tool"] == "f__echo"
    with pytest.raises(RuntimeError, match="a bug in a stage"):  # the engine gets the internal error of any bug
        call_answer(call, rig.gate.redact)


async def test_a_stage_that_raises_after_the_ending_overrules_it_once(rig: Rig, endings: list[str]) -> None:
    async def broken_after(call: ToolCall, call_next: Next) -> ToolCall:
        await call_next(call)
        raise RuntimeError("a bug after the upstream answered")

    rig.gate.around_call(broken_after)
    running = asyncio.create_task(rig.gate.run(a_call()))
    await rig.answer({"result": {"content": []}})
    call = await asyncio.wait_for(running, WAIT)
    assert endings == ["completed", "overruled"] and rig.seen == [call]
    assert call.outcome == "failed" and call.result is None  # what the broken stage left is not shown
    assert [(line["outcome"], line["error"]) for line in rig.audit()] == [("failed", "StageFault")]


async def test_a_cancelled_call_is_recorded_then_the_cancellation_propagates(rig: Rig, endings: list[str]) -> None:
    call = a_call()
    running = asyncio.create_task(rig.gate.run(call))
    await asyncio.wait_for(rig.wire.sent.wait(), WAIT)  # the request is upstream, which never answers
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(running, WAIT)
    assert endings == ["failed"] and rig.seen == [call]
    assert isinstance(call.error, CallCancelled) and rig.conn.in_flight == 0
    assert [(line["outcome"], line["error"]) for line in rig.audit()] == [("failed", "CallCancelled")]


async def test_a_stage_that_forgets_to_end_the_call_leaves_it_failed_once(rig: Rig, endings: list[str]) -> None:
    async def forgetful(call: ToolCall, call_next: Next) -> ToolCall:
        return call

    rig.gate.around_call(forgetful)
    call = await asyncio.wait_for(rig.gate.run(a_call()), WAIT)
    assert endings == ["failed"] and len(rig.audit()) == 1 and rig.seen == [call]
    assert call.error is not None and call.error.message == "the call ended without a result"


async def test_a_second_ending_is_a_bug_that_raises(rig: Rig) -> None:
    call = a_call().complete(msgspec.Raw(b"{}"))
    with pytest.raises(RuntimeError, match="already completed"):
        call.fail(CallCancelled("late"))
    with pytest.raises(RuntimeError, match="already completed"):
        call.complete(msgspec.Raw(b"{}"))


async def test_an_upstream_error_reaches_the_wire_as_it_came_decoded_once(
        rig: Rig, endings: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    error = {"code": -32042, "message": "quota spent", "data": {"retryAfter": 30, "detail": ["a", 1]}}
    decodes: list[int] = []
    decode = msgspec.json.decode

    def counted(raw: Any, *args: Any, **kwargs: Any) -> Any:
        decodes.append(len(raw))
        return decode(raw, *args, **kwargs)

    running = asyncio.create_task(rig.gate.run(a_call()))
    await asyncio.wait_for(rig.wire.sent.wait(), WAIT)
    monkeypatch.setattr(msgspec.json, "decode", counted)
    await rig.answer({"error": error})
    call = await asyncio.wait_for(running, WAIT)
    assert endings == ["failed"] and isinstance(call.error, UpstreamError)
    with pytest.raises(UpstreamError) as raised:
        call_answer(call, rig.gate.redact)
    body = error_body(raised.value, rig.gate.redact)
    assert body == msgspec.json.encode(error)  # code, message and data, byte for byte
    assert len(decodes) <= 1  # the error object is opened once at most, on its way through
    assert [(line["outcome"], line["error"]) for line in rig.audit()] == [("failed", "UpstreamError")]


async def test_an_upstream_error_is_redacted_of_configured_secrets(rig: Rig) -> None:
    running = asyncio.create_task(rig.gate.run(a_call()))
    await rig.answer({"error": {"code": -32000, "message": f"bad token {SECRET}", "data": {"sent": SECRET}}})
    call = await asyncio.wait_for(running, WAIT)
    assert isinstance(call.error, UpstreamError)
    body = json.loads(error_body(call.error, Redactor()))
    assert body == {"code": -32000, "message": "bad token [redacted]", "data": {"sent": "[redacted]"}}
