"""A scriptable Streamable HTTP upstream served in the test's own event loop (aiohttp).

    async with serve_fake(FakeUpstream(...)) as fake:   # fake.url, fake.requests
        ...

Behaviour is chosen per test by the FakeUpstream fields: `modern_only` (answers
`server/discover`, refuses `initialize`, demands the 2026-07-28 envelope and headers on
every request), `status_for` (tool name -> an HTTP status to answer that call with),
`refuse_all` (a status for every request), `extra_tools` (listed too, called like echo),
`refuse_first_discover` (its first discover refused as an unsupported version), `redirect_to` (a URL every request is
redirected to, with `redirect_status`), `list_length` (a Content-Length to claim for
tools/list), `error_text` (the words of a JSON-RPC error for the tool `fail`). Every
request is recorded (method, path, headers, body) in `requests`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web
from http_support import free_port

MODERN = "2026-07-28"
ENVELOPE_VERSION = "io.modelcontextprotocol/protocolVersion"
TOOLS = [
    {"name": "echo", "description": "Echoes its text", "inputSchema": {"type": "object", "properties": {
        "text": {"type": "string"}}}},
    {"name": "fail", "description": "Answers with a JSON-RPC error", "inputSchema": {"type": "object"}},
    {"name": "boom", "description": "Answered by the test's chosen HTTP status", "inputSchema": {"type": "object"}},
    {"name": "whoami", "description": "Echoes the Authorization header it got", "inputSchema": {"type": "object"}},
]


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeUpstream:
    modern_only: bool = False
    status_for: dict[str, int] = field(default_factory=dict)
    refuse_all: int | None = None
    redirect_to: str | None = None
    redirect_status: int = 307
    list_length: int | None = None
    error_text: str = "bad argument"
    filler_tools: int = 0  # extra tools, so a server can be made "big"
    extra_tools: list[dict[str, Any]] = field(default_factory=list)  # listed after TOOLS, called like echo
    refuse_first_discover: bool = False  # the first discover refused as an unsupported version
    page_size: int = 0  # 0: one page
    page_delay: float = 0.0  # seconds before each page after the first
    requests: list[Seen] = field(default_factory=list)
    url: str = ""
    session: str = "fake-session-1"

    def bodies(self, method: str) -> list[Any]:
        return [r.body for r in self.requests if isinstance(r.body, dict) and r.body.get("method") == method]

    async def handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        self.requests.append(Seen(request.method, request.path, dict(request.headers), body))
        target = urlsplit(self.redirect_to or "")
        if self.redirect_to is not None and (target.netloc, target.path) != (request.host, request.path):
            return _redirect(self.redirect_to, self.redirect_status)
        if self.refuse_all is not None:
            return web.Response(status=self.refuse_all, text="no")
        if request.method == "GET":
            return web.Response(status=405)
        if request.method == "DELETE":
            return web.Response(status=200)
        if not isinstance(body, dict):
            return web.Response(status=400)
        if "id" not in body:
            return web.Response(status=202)
        return await self._answer(request, body)

    async def _answer(self, request: web.Request, body: dict[str, Any]) -> web.StreamResponse:
        method, ident = body.get("method"), body.get("id")
        params = body.get("params") or {}
        if self.modern_only:
            refusal = self._modern_refusal(request, method, params)
            if refusal is not None:
                return web.json_response({"jsonrpc": "2.0", "id": ident, "error": refusal}, status=400)
        if method == "server/discover":
            if self.refuse_first_discover and len(self.bodies("server/discover")) == 1:
                return web.json_response({"jsonrpc": "2.0", "id": ident, "error": {
                    "code": -32022, "message": "Unsupported protocol version", "data": {"supported": [MODERN]}}},
                    status=400)
            if not self.modern_only:
                return web.json_response({"jsonrpc": "2.0", "id": ident, "error": {
                    "code": -32601, "message": "Method not found"}}, status=404)
            return _result(ident, {"supportedVersions": [MODERN], "capabilities": {"tools": {}},
                                   "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake", "version": "1"}}})
        if method == "initialize":
            return _result(ident, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                                   "serverInfo": {"name": "fake", "version": "1"}},
                           headers={"Mcp-Session-Id": self.session})
        if method == "tools/list":
            if self.list_length is not None:
                return web.Response(status=200, content_type="application/json",
                                    headers={"Content-Length": str(self.list_length)}, body=b"{" * 16)
            return await self._page(ident, params)
        if method == "tools/call":
            return self._call(ident, params)
        return web.json_response({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "nope"}})

    async def _page(self, ident: Any, params: dict[str, Any]) -> web.Response:
        tools = TOOLS + self.extra_tools + [{"name": f"filler_{i}", "description": "filler", "inputSchema": {"type": "object"}}
                         for i in range(self.filler_tools)]
        if not self.page_size:
            return _result(ident, {"tools": tools})
        start = int(params.get("cursor") or 0)
        if start:
            await asyncio.sleep(self.page_delay)
        page: dict[str, Any] = {"tools": tools[start:start + self.page_size]}
        if start + self.page_size < len(tools):
            page["nextCursor"] = str(start + self.page_size)
        return _result(ident, page)

    def _modern_refusal(self, request: web.Request, method: Any, params: dict[str, Any]) -> dict[str, Any] | None:
        meta = params.get("_meta") or {}
        if method == "initialize" or meta.get(ENVELOPE_VERSION) != MODERN:
            return {"code": -32022, "message": "Unsupported protocol version",
                    "data": {"supported": [MODERN], "requested": str(params.get("protocolVersion"))}}
        if request.headers.get("MCP-Protocol-Version") != MODERN or request.headers.get("Mcp-Method") != method:
            return {"code": -32020, "message": "header mismatch"}
        if method == "tools/call" and request.headers.get("Mcp-Name") != params.get("name"):
            return {"code": -32020, "message": "Mcp-Name mismatch"}
        return None

    def _call(self, ident: Any, params: dict[str, Any]) -> web.StreamResponse:
        name = params.get("name")
        if name in self.status_for:
            return web.Response(status=self.status_for[name], text="upstream trouble")
        if name == "fail":
            return web.json_response({"jsonrpc": "2.0", "id": ident, "error": {
                "code": -32042, "message": f"{self.error_text} (at {self.url})"}})
        if name == "whoami":
            seen = self.requests[-1].headers.get("Authorization", "")
            return _result(ident, {"content": [{"type": "text", "text": f"you sent {seen}"}]})
        text = str((params.get("arguments") or {}).get("text", ""))
        return _result(ident, {"content": [{"type": "text", "text": f"echo: {text}"}]})


def _result(ident: Any, result: dict[str, Any], headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"jsonrpc": "2.0", "id": ident, "result": result}, headers=headers)


def _redirect(location: str, status: int) -> web.Response:
    return web.Response(status=status, headers={"Location": location})


@asynccontextmanager
async def serve_fake(fake: FakeUpstream, path: str = "/mcp") -> AsyncIterator[FakeUpstream]:
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", fake.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    fake.url = f"http://127.0.0.1:{port}{path}"
    try:
        yield fake
    finally:
        await runner.cleanup()
