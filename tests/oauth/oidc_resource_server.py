"""A protected MCP server whose authorization server is oidc-provider
(tests/oauth/oidc_server.mjs): the `mcp` SDK's server with its bearer middleware and
RFC 9728 metadata, verifying the provider's JWT access tokens (signature by its JWKS,
issuer, audience = this server, expiry) with joserfc.

    python tests/oauth/oidc_resource_server.py PORT ISSUER
"""

from __future__ import annotations

import json
import sys
import time
import urllib.request
import warnings
from pathlib import Path

warnings.simplefilter("ignore")

import anyio  # noqa: E402
from joserfc import jwt  # noqa: E402
from joserfc.errors import JoseError  # noqa: E402
from joserfc.jwk import KeySet  # noqa: E402
from mcp.server.auth.provider import AccessToken  # noqa: E402
from mcp.server.auth.settings import AuthSettings  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, for the tests' helpers
from tests.upstreams.loopback import serve_on_loopback  # noqa: E402


class JwtVerifier:
    def __init__(self, issuer: str, audience: str) -> None:
        self.issuer, self.audience = issuer, audience
        self._keys: KeySet | None = None

    def keys(self) -> KeySet:
        if self._keys is None:
            with urllib.request.urlopen(f"{self.issuer}/.well-known/openid-configuration") as answer:
                jwks_uri = json.load(answer)["jwks_uri"]
            with urllib.request.urlopen(jwks_uri) as answer:
                self._keys = KeySet.import_key_set(json.load(answer))
        return self._keys

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            claims = jwt.decode(token, await anyio.to_thread.run_sync(self.keys)).claims
        except (JoseError, ValueError):
            return None
        if claims.get("iss") != self.issuer or claims.get("aud") != self.audience or claims.get("exp", 0) < time.time():
            return None
        return AccessToken(token=token, client_id=str(claims.get("client_id", "")),
                           scopes=str(claims.get("scope", "")).split(), expires_at=int(claims["exp"]),
                           resource=self.audience)


async def main() -> None:
    port, issuer = int(sys.argv[1]), sys.argv[2]
    url = f"http://127.0.0.1:{port}/mcp"
    auth = AuthSettings(issuer_url=issuer, resource_server_url=url, required_scopes=["mcp:tools"],
                        validate_token_resource=False)
    server = MCPServer(name="oidc-guarded", token_verifier=JwtVerifier(issuer, url), auth=auth)

    @server.tool()
    def echo(text: str) -> str:
        """Echoes the text."""
        return f"oidc echo: {text}"

    await serve_on_loopback(server.streamable_http_app(), port)


if __name__ == "__main__":
    try:
        anyio.run(main)
    except KeyboardInterrupt:
        pass
