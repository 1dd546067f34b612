"""Fixtures of the server-command tests: a tiny Streamable HTTP MCP server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest


@dataclass
class McpHttp:
    """A tiny Streamable HTTP server: wants `X-Api-Key`, answers initialize and tools/list."""

    key: str = "right-key"
    refusal: int = 401
    challenge: bool = False  # a WWW-Authenticate naming RFC 9728 metadata
    metadata: bool = False  # the metadata document at its well-known address
    seen_keys: list[str] = field(default_factory=list)
    base: str = ""

    def app(self) -> Any:
        from aiohttp import web

        app = web.Application()
        app.router.add_route("*", "/mcp", self.mcp)
        app.router.add_get("/.well-known/oauth-protected-resource/mcp", self.well_known)
        return app

    async def mcp(self, request: Any) -> Any:
        from aiohttp import web

        if request.method != "POST":
            return web.Response(status=405)
        given = request.headers.get("X-Api-Key", "")
        self.seen_keys.append(given)
        if given != self.key:
            headers = {"WWW-Authenticate": f'Bearer resource_metadata="{self.base}/.well-known/oauth-protected-resource/mcp"'} \
                if self.challenge else {"WWW-Authenticate": "Bearer"}
            return web.Response(status=self.refusal, text=f"refused key {given}", headers=headers)
        frame = await request.json()
        if "id" not in frame:
            return web.Response(status=202)
        return web.json_response({"jsonrpc": "2.0", "id": frame["id"], **self.answer(frame)},
                                 headers={"Mcp-Session-Id": "session-1"})

    def answer(self, frame: dict[str, Any]) -> dict[str, Any]:
        if frame["method"] == "initialize":
            return {"result": {"protocolVersion": frame["params"]["protocolVersion"], "capabilities": {"tools": {}},
                               "serverInfo": {"name": "tiny", "version": "1"}}}
        if frame["method"] == "tools/list":
            tools = [{"name": n, "inputSchema": {"type": "object"}} for n in ("lookup", "search")]
            return {"result": {"tools": tools}}
        return {"error": {"code": -32601, "message": "no such method"}}

    async def well_known(self, request: Any) -> Any:
        from aiohttp import web

        if not self.metadata:
            return web.Response(status=404)
        return web.json_response({"resource": f"{self.base}/mcp", "authorization_servers": [f"{self.base}/auth"]})


@pytest.fixture
async def serve_http() -> AsyncIterator[Callable[..., Any]]:
    """`spec, url = await serve_http(key=..., refusal=401, challenge=False, metadata=False)`."""
    from aiohttp import web

    runners: list[Any] = []

    async def start(**options: Any) -> tuple[McpHttp, str]:
        spec = McpHttp(**options)
        runner = web.AppRunner(spec.app())
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        runners.append(runner)
        port = runner.addresses[0][1]
        spec.base = f"http://127.0.0.1:{port}"
        return spec, f"{spec.base}/mcp"

    yield start
    for runner in runners:
        await runner.cleanup()
