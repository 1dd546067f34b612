"""The gate, timed in memory: what it adds to a call, and what the result budget costs.

Owns the benchmark of `sidecar.gate` without processes or pipes: a Gate whose upstream
is an in-memory connection that answers each request on the next loop turn, so the
figures are the gate's own Python work. Measured: microseconds per pass-through call
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


class _EchoTransport:
    """Answers every request on the next loop turn, as the fastest upstream would."""

    def __init__(self) -> None:
        self.conn: Any = None
        self._decode = msgspec.json.Decoder(dict[str, Any])

    def write(self, data: bytes) -> None:
        ident = self._decode.decode(data)["id"]
        answer = b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"ok"}]}}' % ident
        asyncio.get_running_loop().call_soon(self.conn.feed, answer)


SECRET_ENV = {"API_KEY": "sk-live-4f9a8b7c6d5e4f3a2b1c", "GITHUB_TOKEN": "ghp_0123456789abcdefABCDEF0123456789",
              "DB_PASSWORD": "correct horse battery staple 42"}


def _config(extra: dict[str, Any]) -> Any:
    from sidecar.config import parse_config

    servers = {"up": {"command": "unused", **extra.pop("up", {})}}
    return parse_config({"mcpServers": servers, **extra}, {})


async def _calls_us(extra: dict[str, Any], stages: str) -> float:
    from sidecar.catalog import UpstreamListing, build_catalog, full_layout
    from sidecar.gate import Gate, ToolCall
    from sidecar.gate.route import route_upstream
    from sidecar.upstream import Pool
    from sidecar.upstream.connection import Connection
    from sidecar.upstream.handshake import Handshake

    config = _config(extra)
    pool = Pool(config.servers, _NoPeer(), lambda upstream: None, 8.0)
    upstream = pool.get("up")
    transport = _EchoTransport()
    transport.conn = upstream.connection = Connection("up", transport, _NoPeer())  # type: ignore[union-attr]
    upstream.info = Handshake("2025-06-18", {"tools": {}}, {}, None)  # type: ignore[union-attr]
    upstream._set_state("ready")  # type: ignore[union-attr]  # as a finished handshake would, through the table
    gate = Gate(config, pool)
    gate.catalog = build_catalog([UpstreamListing("up", [{"name": "echo", "inputSchema": {"type": "object"}}])], 50)
    gate.listing = full_layout(gate.catalog)
    target = gate.catalog.tool("up__echo")

    async def one(n: int) -> None:
        call = ToolCall(name="up__echo", arguments={"n": n})
        if stages == "route":  # the terminal alone: what any proxy must do to forward a call
            call.target = target
            await route_upstream(call, pool, None)
        else:
            await gate.run(call)

    for n in range(200):
        await one(n)
    start = time.perf_counter()
    for n in range(CALLS):
        await one(n)
    return (time.perf_counter() - start) / CALLS * 1e6


class _NoPeer:
    def upstream_notification(self, conn: Any, frame: Any) -> None:
        pass

    def upstream_request(self, conn: Any, frame: Any) -> None:
        pass


def _shape_ms(size: int, repeats: int) -> tuple[float, bytes, Any]:
    from sidecar.gate.budget import charge_result
    from sidecar.gate.held import HeldStore

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
    from sidecar.gate.query import QueryLimits, run_query

    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run_query(payload, "[?state == 'open' && comments > `30`] | [0:20].{id: id, title: title}", QueryLimits())
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e3


def _redact_1mb_ms(repeats: int) -> float:
    """Redacting a 1 MB JSON result that holds no secret (the common case), three secrets configured."""
    from sidecar.gate.route import answer_redactor, scrub_answer

    redactor = answer_redactor(_config({"up": {"env": SECRET_ENV}}))
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
