"""A protected MCP server and its authorization server that answer whatever bytes the test
hands them, served in the test's own event loop (aiohttp, 127.0.0.1 only).

    async with hostile_auth() as site:      # site.url is the MCP endpoint, site.origin the issuer
        site.answers[PRM] = Canned(200, b"[[[[")

`POST /mcp` answers 401 with `site.challenge` (by default a Bearer challenge naming the
protected resource metadata on this origin). The protected resource metadata (PRM), the
authorization server metadata (ASM) and the token endpoint (TOKEN) start valid, for a
client-credentials sign-in with this origin as issuer; a test swaps any of them. Every
request's path is kept in `site.seen`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

PRM = "/.well-known/oauth-protected-resource/mcp"
ASM = "/.well-known/oauth-authorization-server"
TOKEN = "/token"


@dataclass
class Canned:
    status: int
    body: bytes
    chunked: bool = False  # no Content-Length: the reader meets the size only by reading

    @classmethod
    def of(cls, document: Any) -> Canned:
        return cls(200, json.dumps(document).encode())


def valid_documents(origin: str) -> dict[str, Canned]:
    return {
        PRM: Canned.of({"resource": f"{origin}/mcp", "authorization_servers": [origin]}),
        ASM: Canned.of({"issuer": origin, "token_endpoint": f"{origin}{TOKEN}",
                        "authorization_endpoint": f"{origin}/authorize",
                        "code_challenge_methods_supported": ["S256"],
                        "token_endpoint_auth_methods_supported": ["client_secret_basic"]}),
        TOKEN: Canned.of({"access_token": "at-hostile-canary", "token_type": "Bearer", "expires_in": 3600}),
    }


@dataclass
class HostileAuth:
    origin: str = ""
    challenge: str = ""
    answers: dict[str, Canned] = field(default_factory=dict)
    seen: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"{self.origin}/mcp"

    def reset(self) -> None:
        self.answers = valid_documents(self.origin)
        self.challenge = f'Bearer resource_metadata="{self.origin}{PRM}"'
        self.seen.clear()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.seen.append(request.path)
        await request.read()
        if request.path == "/mcp":
            return web.Response(status=401, headers={"WWW-Authenticate": self.challenge})
        canned = self.answers.get(request.path)
        if canned is None:
            return web.Response(status=404)
        headers = {"Content-Type": "application/json"}
        if not canned.chunked:
            return web.Response(status=canned.status, body=canned.body, headers=headers)
        response = web.StreamResponse(status=canned.status, headers=headers)
        await response.prepare(request)
        for start in range(0, len(canned.body), 65536):
            await response.write(canned.body[start:start + 65536])
        return response


@asynccontextmanager
async def hostile_auth(port: int = 0) -> AsyncIterator[HostileAuth]:
    site = HostileAuth()
    app = web.Application(client_max_size=1024 * 1024)
    app.router.add_route("*", "/{tail:.*}", site.handle)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    site.origin = f"http://127.0.0.1:{runner.addresses[0][1]}"
    site.reset()
    try:
        yield site
    finally:
        await runner.cleanup()
