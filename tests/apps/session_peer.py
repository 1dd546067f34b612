"""A raw engine on the sidecar's HTTP session front (2025-era Streamable HTTP): initialize,
then requests on that session, answers read from JSON or from an event stream; and
`stateless(...)`, one 2026-07-28 request on the stateless front. Shared by
tests/apps and tests/tasks; every wait is bounded by the HTTP client's timeout."""

from __future__ import annotations

import json
from itertools import count
from typing import Any

import aiohttp

from tests.http.http_support import HttpSidecar

WAIT = aiohttp.ClientTimeout(total=60)
MODERN = "2026-07-28"
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
NAMED_BY = {"tools/call": "name", "resources/read": "uri"}



class SessionPeer:
    """One engine session: `await peer.request(method, params)` -> the whole answer frame."""

    def __init__(self, sc: HttpSidecar, client: aiohttp.ClientSession) -> None:
        self.sc, self.client = sc, client
        self.session_id = ""
        self._ids = count(1)
        self.seen: list[dict[str, Any]] = []  # every message read, answers and notifications

    async def initialize(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        answer = await self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": capabilities or {},
                                                   "clientInfo": {"name": "session-peer", "version": "1"}})
        await self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        ident = next(self._ids)
        body = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params or {}}
        messages = await self._post(body)
        return next(m for m in messages if m.get("id") == ident and "method" not in m)

    async def _post(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        headers = self.sc.headers(**({"Mcp-Session-Id": self.session_id} if self.session_id else {}),
                                  **({"MCP-Protocol-Version": "2025-11-25"} if self.session_id else {}))
        async with self.client.post(self.sc.url, data=json.dumps(body), headers=headers, timeout=WAIT) as response:
            assert response.status in (200, 202), (response.status, await response.text())
            self.session_id = response.headers.get("Mcp-Session-Id", self.session_id)
            text = await response.text()
            kind = response.headers.get("Content-Type", "")
        messages = _events(text) if kind.startswith("text/event-stream") else [json.loads(text)] if text else []
        self.seen += messages
        return messages


def _events(text: str) -> list[dict[str, Any]]:
    found = []
    for block in text.split("\n\n"):
        data = "\n".join(line[5:].lstrip() for line in block.splitlines() if line.startswith("data:"))
        if data:
            found.append(json.loads(data))
    return found


async def stateless(sc: HttpSidecar, client: aiohttp.ClientSession, method: str, params: dict[str, Any]) -> Any:
    """One 2026-07-28 request, its headers mirroring its body as the revision asks."""
    params = {**params, "_meta": {**ENVELOPE, **params.get("_meta", {})}}
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if method in NAMED_BY:
        headers["Mcp-Name"] = params[NAMED_BY[method]]
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    async with client.post(sc.url, data=json.dumps(body), headers=sc.headers(**headers)) as response:
        text = await response.text()
    if response.headers.get("Content-Type", "").startswith("text/event-stream"):
        text = [line[5:] for line in text.splitlines() if line.startswith("data:")][-1]
    return json.loads(text)
