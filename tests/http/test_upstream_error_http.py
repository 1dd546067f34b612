"""An upstream's JSON-RPC error on tools/call reaches an HTTP engine as it came: its
`code`, `message` and `data`, a configured secret redacted, on the session revision and
on the stateless one (2026-07-28) alike."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest
from http_support import HttpSidecar, http_sidecar  # noqa: F401 - fixture

pytestmark = pytest.mark.timeout(120)

SECRET = "canary-http-err-3f1e9d7c"
MODERN = "2026-07-28"
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
DATA = {"retryAfter": 30, "fields": ["a", "b"], "echo": f"sent {SECRET}"}
ARGUMENTS = {"code": -32042, "message": f"quota spent for {SECRET}", "data": DATA}
EXPECTED = {"code": -32042, "message": "quota spent for [redacted]", "data": {**DATA, "echo": "sent [redacted]"}}


async def post(sc: HttpSidecar, body: Any, **headers: str) -> tuple[dict[str, str], dict[str, Any]]:
    async with aiohttp.ClientSession() as client:
        async with client.post(sc.url, data=json.dumps(body).encode(), headers=sc.headers(**headers)) as response:
            assert response.status == 200, await response.text()
            text = await response.text()
    if text.lstrip().startswith("{"):
        return dict(response.headers), json.loads(text)
    events = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    return dict(response.headers), json.loads(events[-1])


def call(ident: int, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "f__error", "arguments": ARGUMENTS}
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}


async def test_an_upstream_error_keeps_its_data_over_http(http_sidecar, fault_server_entry, write_config) -> None:
    config = write_config({"f": fault_server_entry(env={"SECRET_TOKEN": SECRET})}, face={"listWaitSeconds": 20})
    async with http_sidecar(config) as sc:
        headers, _ = await post(sc, INIT)
        session = headers["Mcp-Session-Id"]
        _, answer = await post(sc, call(2), **{"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"})
        assert answer["error"] == EXPECTED
        _, answer = await post(sc, call(3, ENVELOPE), **{"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call",
                                                          "Mcp-Name": "f__error"})
        assert answer["error"] == EXPECTED
