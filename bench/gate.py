"""The gate, timed in memory: what it adds to a call, and what the result budget costs.

Owns the benchmark of `sidecar.gate` without processes or pipes: a face built by
`build_face` whose one upstream is an in-memory channel that answers each request on the
next loop turn, so the figures are the gate's own Python work. Measured: microseconds per pass-through call
through the default chain (resolve, charge, call), through the full chain (record to an
audit file, grants, a policy rule), through the default chain with three secrets
configured (so every answer is checked for them), and through the bare route alone;
the time to redact a 1 MB result holding no secret; the time to shape
1 MB and 20 MB JSON results (hold + shaped view); and a `query_result` (a JMESPath filter
and projection) over the held 20 MB result.

Refuses to fail the run: if the sidecar's gate API is missing or changed, the result is
`{"error": ...}` and the report says so.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec

from bench.catalogs import records_json

__all__ = ["time_gate"]

CALLS = 5000
_BLOCK = 250  # calls a timed block of the gate's figures holds (CALLS / _BLOCK blocks)


class _EchoChannel:
    """An upstream in memory that answers on the next loop turn, as the fastest upstream
    would: the handshake, one `echo` tool, and "ok" to every call. Opened by the pool like
    any transport (the channel opener of `build_face`)."""

    TOOLS = [{"name": "echo", "inputSchema": {"type": "object"}}]

    def __init__(self, on_line: Any) -> None:
        self._on_line = on_line
        self._loop = asyncio.get_running_loop()
        self.gone: asyncio.Future[None] = self._loop.create_future()

    @classmethod
    async def open(cls, server: Any, inbox: Any) -> _EchoChannel:
        return cls(inbox.feed)

    def send(self, message: Any) -> None:
        ident, method = message.id, message.method  # typed on the way down: nothing to parse
        if ident is None or method is None:
            return
        if method == "tools/call":
            answer = b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"ok"}]}}' % ident
        else:
            answer = msgspec.json.encode({"jsonrpc": "2.0", "id": ident, "result": self._result(method)})
        self._loop.call_soon(self._on_line, answer)

    def _result(self, method: str) -> dict[str, Any]:
        if method == "initialize":
            return {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "echo"}}
        return {"tools": self.TOOLS} if method == "tools/list" else {}

    async def stop(self) -> None:
        if not self.gone.done():
            self.gone.set_result(None)

    def ended(self) -> Any:
        from sidecar.errors import UpstreamUnavailable

        return UpstreamUnavailable("stopped")

    def diagnostics(self) -> str:
        return ""


SECRET_ENV = {"API_KEY": "sk-live-4f9a8b7c6d5e4f3a2b1c", "GITHUB_TOKEN": "ghp_0123456789abcdefABCDEF0123456789",
              "DB_PASSWORD": "correct horse battery staple 42"}


def _config(extra: dict[str, Any]) -> Any:
    from sidecar.config import parse_config

    servers = {"up": {"command": "unused", **extra.pop("up", {})}}
    return parse_config({"mcpServers": servers, **extra}, {})


async def _calls_us(extra: dict[str, Any], stages: str) -> float:
    from sidecar.gate import ToolCall
    from sidecar.gate.route import route_upstream
    from sidecar.hub import build_face

    face = build_face(_config(extra), _EchoChannel.open)  # built as every front builds it
    pool, gate = face.pool, face.gate
    running = asyncio.create_task(pool.run())
    try:
        await pool.wait_first_start("up", 10.0)
        target = gate.catalog.tool("up__echo")
        assert target is not None, "the bench face does not list up__echo"
        return await _time_calls(gate, pool, target, stages, ToolCall, route_upstream)
    finally:
        running.cancel()
        await asyncio.wait([running])


async def _time_calls(gate: Any, pool: Any, target: Any, stages: str, tool_call: Any, route_upstream: Any) -> float:
    async def one(n: int) -> None:
        call = tool_call(name="up__echo", arguments={"n": n})
        if stages == "route":  # the terminal alone: what any proxy must do to forward a call
            call.target = target
            await route_upstream(call, pool, None)
        else:
            await gate.run(call)

    for n in range(200):
        await one(n)
    blocks = []  # the median of blocks: a second of other work on the machine moves one block, not the figure
    for first in range(0, CALLS, _BLOCK):
        start = time.perf_counter()
        for n in range(first, first + _BLOCK):
            await one(n)
        blocks.append((time.perf_counter() - start) / _BLOCK * 1e6)
    return statistics.median(blocks)


def _shape_ms(size: int, repeats: int) -> tuple[float, bytes, Any]:
    from sidecar.gate.budget.charge import charge_result
    from sidecar.gate.budget.held import HeldStore

    result = msgspec.json.encode({"content": [{"type": "text", "text": records_json(size).decode()}]})
    store = HeldStore(64 * 1024 * 1024)
    times, charged = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        charged = charge_result(result, 8000, 1 << 20, lambda payload: store.hold("s", "up", "t", payload))
        times.append(time.perf_counter() - started)
    assert charged is not None and charged.kind == "shaped", charged
    held = store.get("s", charged.handle)
    return statistics.median(times) * 1e3, held.payload if held else b"", charged


def _query_ms(payload: bytes, repeats: int) -> float:
    from sidecar.gate.budget.query import QueryLimits, run_query

    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run_query(payload, "[?state == 'open' && comments > `30`] | [0:20].{id: id, title: title}", QueryLimits())
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e3


def _redact_1mb_ms(repeats: int) -> float:
    """Redacting a 1 MB JSON result that holds no secret (the common case), three secrets configured."""
    from sidecar.catalog.facts import facts_for
    from sidecar.gate.route import scrub_answer

    config = _config({"up": {"env": SECRET_ENV}})
    redactor = facts_for(config, config.servers).answers  # the answers' redactor of the gate's snapshot
    result = msgspec.Raw(msgspec.json.encode({"content": [{"type": "text", "text": records_json(1_000_000).decode()}]}))
    times = []
    for _ in range(max(repeats, 5)):
        started = time.perf_counter()
        assert scrub_answer(result, redactor) is result
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e3


def time_gate(repeats: int = 3) -> dict[str, float | str]:
    """Every figure of the gate benchmark, or {'error': ...}."""
    try:
        with tempfile.TemporaryDirectory() as folder:
            audit = str(Path(folder) / "audit.jsonl")
            full = {"audit": {"file": audit}, "grants": {"deny": ["*__delete_*"]},
                    "policy": {"rules": [{"tool": "*__drop_*", "action": "deny"}]}}
            figures: dict[str, float | str] = {
                "gate_default_us": asyncio.run(_calls_us({}, "default")),
                "gate_full_us": asyncio.run(_calls_us(full, "default")),
                "gate_route_only_us": asyncio.run(_calls_us({}, "route")),
                "gate_with_secrets_us": asyncio.run(_calls_us({"up": {"env": SECRET_ENV}}, "default")),
            }
        for size, label in ((1_000_000, "1mb"), (20_000_000, "20mb")):
            figures[f"shape_{label}_ms"], payload, _ = _shape_ms(size, repeats)
        figures["query_20mb_ms"] = _query_ms(payload, repeats)
        figures["redact_1mb_ms"] = _redact_1mb_ms(repeats)
        return figures
    except Exception as exc:  # the report names the failure; the run goes on
        return {"error": f"{type(exc).__name__}: {exc}"}
