"""A protected MCP server and its authorization server, built from the `mcp` SDK's own
server auth components (mcp.server.auth: metadata, /authorize, /token, /register,
/revoke, the bearer middleware and RFC 9728 metadata), on one loopback port.

    python tests/oauth/sdk_auth_server.py [--no-registration] [--client ID:SECRET]
        [--access-seconds N] [--scopes "a b"] [--required "a"] [--port N] [--issuer URL]

Prints `PORT <n>` once it listens. The MCP endpoint is `/mcp`, the issuer the origin
(or `--issuer`: the protected resource metadata then names that other server).
The login page (`/login`) is what a person's browser shows: a form whose POST approves
and redirects to the client with the code. Test controls (never in a real server):
POST /test/expire (every access token expires now), POST /test/revoke-refresh (every
refresh token is revoked), GET /test/record (every value issued or received: tokens,
codes, client secrets, code verifiers; and the `resource` and `scope` of each request).
"""

from __future__ import annotations

import argparse
import secrets
import sys
import time
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

warnings.simplefilter("ignore")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, for the tests' helpers

import anyio  # noqa: E402
from mcp.server.auth.provider import (  # noqa: E402
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response  # noqa: E402

from tests.upstreams.loopback import serve_built_on_loopback, whole_body  # noqa: E402


class Record:
    def __init__(self) -> None:
        self.values: set[str] = set()
        self.requests: list[dict[str, Any]] = []

    def keep(self, *values: str | None) -> None:
        self.values |= {v for v in values if v}


class Provider:
    """An in-memory authorization server provider with a login page."""

    def __init__(self, origin: str, access_seconds: int, record: Record) -> None:
        self.origin = origin
        self.access_seconds = access_seconds
        self.record = record
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.pending: dict[str, tuple[str, AuthorizationParams]] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.record.keep(client_info.client_secret)
        self.clients[str(client_info.client_id)] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        ticket = secrets.token_urlsafe(12)
        self.pending[ticket] = (str(client.client_id), params)
        self.record.requests.append({"at": "authorize", "resource": params.resource,
                                     "scope": " ".join(params.scopes or [])})
        return f"{self.origin}/login?ticket={ticket}"

    def approve(self, ticket: str) -> str:
        client_id, params = self.pending.pop(ticket)
        code = "code-" + secrets.token_urlsafe(24)
        self.record.keep(code)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 300, client_id=client_id,
            code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly, resource=params.resource)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None, old_refresh: str | None) -> OAuthToken:
        access = "at-" + secrets.token_urlsafe(24)
        refresh = "rt-" + secrets.token_urlsafe(24)
        self.record.keep(access, refresh)
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + self.access_seconds, resource=resource)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        if old_refresh:
            self.refresh.pop(old_refresh, None)  # rotated: the old one is spent
        return OAuthToken(access_token=access, token_type="Bearer", expires_in=self.access_seconds,
                          refresh_token=refresh, scope=" ".join(scopes))

    async def exchange_authorization_code(self, client: OAuthClientInformationFull,
                                          authorization_code: AuthorizationCode) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        return self._issue(str(client.client_id), authorization_code.scopes, authorization_code.resource, None)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        found = self.refresh.get(refresh_token)
        return found if found is not None and found.client_id == client.client_id else None

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        self.record.requests.append({"at": "refresh", "resource": refresh_token.resource})
        return self._issue(str(client.client_id), scopes or refresh_token.scopes, refresh_token.resource,
                           refresh_token.token)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.record.requests.append({"at": "revoke", "kind": type(token).__name__})
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


class TokenBodies:
    """ASGI wrapper: keeps the code verifier and code of every /token request for the
    canary sweep, then replays the body unchanged."""

    def __init__(self, app: Any, record: Record) -> None:
        self.app, self.record = app, record

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != "/token":
            await self.app(scope, receive, send)
            return
        body, replay = await whole_body(receive)
        form = dict(parse_qsl(body.decode(errors="replace")))
        self.record.keep(form.get("code_verifier"), form.get("code"), form.get("refresh_token"),
                         form.get("client_secret"))
        self.record.requests.append({"at": "token", "grant": form.get("grant_type"), "resource": form.get("resource"),
                                     "basic": any(k == b"authorization" for k, _ in scope["headers"])})
        await self.app(scope, replay, send)


def build(port: int, options: argparse.Namespace) -> tuple[Any, Provider]:
    origin = f"http://127.0.0.1:{port}"
    record = Record()
    provider = Provider(origin, options.access_seconds, record)
    scopes = options.scopes.split()
    if options.client:
        client_id, _, secret = options.client.partition(":")
        record.keep(secret)
        provider.clients[client_id] = OAuthClientInformationFull(
            client_id=client_id, client_secret=secret or None,
            redirect_uris=options.redirect.split() or None,
            token_endpoint_auth_method="client_secret_basic" if secret else "none",
            grant_types=["authorization_code", "refresh_token"], scope=" ".join(scopes))
    auth = AuthSettings(
        issuer_url=options.issuer or origin, resource_server_url=f"{origin}/mcp", validate_token_resource=True,
        client_registration_options=ClientRegistrationOptions(enabled=not options.no_registration,
                                                              valid_scopes=scopes, default_scopes=scopes[:1]),
        revocation_options=RevocationOptions(enabled=True), required_scopes=options.required.split() or None)
    server = MCPServer(name="guarded", auth_server_provider=provider, auth=auth)  # type: ignore[arg-type]

    @server.tool(annotations={"readOnlyHint": True})
    def whoami() -> str:
        """Says who is calling."""
        return "a signed-in person"

    @server.tool()
    def echo(text: str) -> str:
        """Echoes the text."""
        return f"echo: {text}"

    @server.custom_route("/login", methods=["GET", "POST"])
    async def login(request: Request) -> Response:
        if request.method == "GET":
            ticket = request.query_params.get("ticket", "")
            return HTMLResponse(f'<form method="post" action="/login"><input type="hidden" name="ticket" '
                                f'value="{ticket}"><button name="approve" value="yes">Allow</button></form>')
        form = await request.form()
        return RedirectResponse(provider.approve(str(form.get("ticket", ""))), status_code=302)

    @server.custom_route("/test/expire", methods=["POST"])
    async def expire(request: Request) -> Response:
        for token in provider.access.values():
            token.expires_at = 0
        return JSONResponse({"expired": len(provider.access)})

    @server.custom_route("/test/revoke-refresh", methods=["POST"])
    async def revoke_refresh(request: Request) -> Response:
        count = len(provider.refresh)
        provider.refresh.clear()
        return JSONResponse({"revoked": count})

    @server.custom_route("/test/record", methods=["GET"])
    async def show_record(request: Request) -> Response:
        return JSONResponse({"values": sorted(record.values), "requests": record.requests,
                             "live": {"access": len(provider.access), "refresh": len(provider.refresh)}})

    return TokenBodies(server.streamable_http_app(), record), provider


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-registration", action="store_true")
    parser.add_argument("--client", default="", help="a pre-registered client ID[:SECRET]")
    parser.add_argument("--redirect", default="", help="its registered redirect URIs")
    parser.add_argument("--access-seconds", type=int, default=3600)
    parser.add_argument("--scopes", default="mcp:read mcp:write")
    parser.add_argument("--required", default="mcp:read")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--issuer", default="", help="the issuer its resource metadata names (default: itself)")
    return parser.parse_args()


async def main() -> None:
    options = parse_args()
    await serve_built_on_loopback(lambda port: build(port, options)[0], options.port)


if __name__ == "__main__":
    try:
        anyio.run(main)
    except KeyboardInterrupt:
        pass

