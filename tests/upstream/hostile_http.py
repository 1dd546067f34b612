"""A URL upstream whose answers are whatever bytes the test hands it, served in the test's
own event loop (aiohttp, 127.0.0.1 only).

    async with serve_hostile() as server:    # server.http_url, server.sse_url

Streamable HTTP at `/mcp` (a session id, no GET stream) and legacy SSE at `/sse` (the
`endpoint` event, then every answer on the one event stream). Both list the tools
`say {lines, stream?}` and `echo {nonce}`. `say` answers with the raw `lines`, `{id}`
replaced by the call's JSON id: over Streamable HTTP one JSON body (the first line, with
the HTTP `status` asked for) or, with `stream: true`, one event per line; over SSE one
event per line.

`say` misbehaves on command too (the faults a transport must report in one shape):
`status` answers with that HTTP status (over SSE: the POST is refused with it), `stall`
starts the answer and never finishes it (over SSE: never answers), `vanish` drops the
connection unanswered and stops listening (over SSE: ends the event stream).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

TOOLS = [{"name": "say", "description": "Answers with raw lines", "inputSchema": {"type": "object"}},
         {"name": "echo", "description": "Answers the nonce", "inputSchema": {"type": "object"}}]


def _answer(ident: Any, method: str, params: dict[str, Any]) -> list[str] | None:
    """The lines that answer a request; None for `say`, which is the test's."""
    if method == "initialize":
        result: dict[str, Any] = {"protocolVersion": params.get("protocolVersion", "2025-11-25"),
                                  "capabilities": {"tools": {}}, "serverInfo": {"name": "hostile-web"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call" and params.get("name") == "say":
        arguments = params.get("arguments") or {}
        return [line.replace("{id}", json.dumps(ident)) for line in arguments.get("lines", [])]
    elif method == "tools/call":
        nonce = str((params.get("arguments") or {}).get("nonce", ""))
        result = {"content": [{"type": "text", "text": nonce}]}
    else:
        return [json.dumps({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "no"}})]
    return [json.dumps({"jsonrpc": "2.0", "id": ident, "result": result})]


def _events(lines: list[str]) -> bytes:
    return b"".join(b"event: message\ndata: " + line.encode("utf-8", "surrogatepass") + b"\n\n" for line in lines)


@dataclass
class HostileWeb:
    http_url: str = ""
    sse_url: str = ""
    site: web.TCPSite | None = None
    _streams: list[asyncio.Queue[bytes]] = field(default_factory=list)
    _never: asyncio.Event = field(default_factory=asyncio.Event)  # what a stalled answer waits for

    async def _vanish(self, request: web.Request) -> web.StreamResponse:
        """Stop listening, then drop this connection unanswered."""
        if self.site is not None:
            await self.site.stop()
        assert request.transport is not None
        request.transport.close()
        return web.Response(status=500)

    async def _stall(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/json", "Content-Length": "1000"})
        await response.prepare(request)
        await response.write(b'{"jsonrpc":"2.0",')
        await self._never.wait()
        return response

    async def streamable(self, request: web.Request) -> web.StreamResponse:
        if request.method != "POST":
            return web.Response(status=405 if request.method == "GET" else 200)
        body = json.loads(await request.read())
        if "id" not in body:
            return web.Response(status=202)
        params = body.get("params") or {}
        arguments = params.get("arguments") or {}
        if arguments.get("vanish"):
            return await self._vanish(request)
        if arguments.get("stall"):
            return await self._stall(request)
        lines = _answer(body["id"], body["method"], params) or []
        headers = {"Mcp-Session-Id": "hostile-1"} if body["method"] == "initialize" else {}
        if arguments.get("stream"):
            return web.Response(body=_events(lines), content_type="text/event-stream", headers=headers)
        status = int((params.get("arguments") or {}).get("status", 200))
        return web.Response(body=lines[0].encode("utf-8", "surrogatepass") if lines else b"", status=status,
                            content_type="application/json", headers=headers)

    async def sse_stream(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        queue: asyncio.Queue[bytes] = asyncio.Queue()
        self._streams.append(queue)
        await response.write(b"event: endpoint\ndata: /messages\n\n")
        try:
            while chunk := await queue.get():
                await response.write(chunk)
            return response
        finally:
            self._streams.remove(queue)

    async def sse_post(self, request: web.Request) -> web.StreamResponse:
        body = json.loads(await request.read())
        arguments = (body.get("params") or {}).get("arguments") or {}
        if int(arguments.get("status", 202)) >= 300:
            return web.Response(status=int(arguments["status"]))
        if arguments.get("vanish"):
            for stream in self._streams:
                stream.put_nowait(b"")  # the end of the event stream
            return web.Response(status=202)
        if arguments.get("stall"):
            return web.Response(status=202)  # taken, and never answered
        if "id" in body and self._streams:
            lines = _answer(body["id"], body["method"], body.get("params") or {}) or []
            self._streams[-1].put_nowait(_events(lines))
        return web.Response(status=202)


@asynccontextmanager
async def serve_hostile() -> AsyncIterator[HostileWeb]:
    server = HostileWeb()
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_route("*", "/mcp", server.streamable)
    app.router.add_get("/sse", server.sse_stream)
    app.router.add_post("/messages", server.sse_post)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    server.site = site
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    server.http_url, server.sse_url = f"http://127.0.0.1:{port}/mcp", f"http://127.0.0.1:{port}/sse"
    try:
        yield server
    finally:
        server._never.set()
        await runner.cleanup()
