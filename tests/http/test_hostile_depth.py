"""The depth limit on the HTTP front, as a real process: a body nested past the limit gets a
JSON-RPC -32700 (not aiohttp's text/plain 500) on a session and on a 2026-07-28 request,
its id echoed when the body's edges show it, and the next request is served."""

from __future__ import annotations

import json
import random

import pytest
from http_support import http_sidecar  # noqa: F401 - fixture
from test_front import ENVELOPE, INIT, MODERN, empty_config, initialize, post  # noqa: F401 - fixture

pytestmark = pytest.mark.timeout(120)


def deep_bodies(rng: random.Random, count: int, meta: dict[str, object] | None) -> list[tuple[bytes, object]]:
    params = ',"_meta":%s' % json.dumps(meta) if meta else ""
    bodies: list[tuple[bytes, object]] = []
    for n in range(count):
        depth = rng.choice([513, 1_000, 10_000, 100_000])
        nest = rng.choice([("[", "]"), ('{"a":', "}")])
        inner = nest[0] * depth + "0" + nest[1] * depth
        if rng.random() < 0.3:
            bodies.append(((nest[0] * depth).encode(), None))  # bare, never closed
        elif rng.random() < 0.5:
            bodies.append((('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"x","arguments":{"v":%s}%s}}'
                            % (n, inner, params)).encode(), n))
        else:
            bodies.append((('{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x","arguments":{"v":%s}%s},"id":%d}'
                            % (inner, params, n)).encode(), n))
    return bodies


@pytest.mark.parametrize("revision", ["session", "2026-07-28"])
async def test_too_deep_bodies_get_a_parse_error_and_the_front_keeps_serving(http_sidecar, empty_config, revision):
    rng = random.Random(revision)
    async with http_sidecar(empty_config) as sc:
        if revision == "session":
            headers = {"Mcp-Session-Id": await initialize(sc), "MCP-Protocol-Version": "2025-11-25"}
            meta = None
        else:
            headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "x"}
            meta = ENVELOPE
        for body, ident in deep_bodies(rng, 25, meta):
            status, got, text = await post(sc, body, **headers)
            assert status == 400 and got["Content-Type"].startswith("application/json"), (status, text[:200])
            error = json.loads(text)
            assert error["error"]["code"] == -32700 and "512 levels" in error["error"]["message"]
            assert error["id"] == ident
            listing = {"jsonrpc": "2.0", "id": "next", "method": "tools/list", "params": {"_meta": ENVELOPE} if meta else {}}
            status, _, text = await post(sc, listing, **{**headers, "Mcp-Method": "tools/list"} if meta else headers)
            assert status == 200 and "result" in json.loads(text)
        assert "Traceback" not in sc.stderr and "RecursionError" not in sc.stderr
