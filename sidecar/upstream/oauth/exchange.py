"""Talking to authorization servers: metadata, registration, tokens, revocation.

Owns the requests of one sign-in, every one through the outbound gate
(`sidecar.upstream.outbound`: https, a checked address dialled as checked, same-origin
redirects, a 64 KB cap on every answer), with none of the MCP server's configured
headers; answers read by `documents` (nesting bounded, non-JSON read as None); and the
client's proof at the token endpoint (HTTP Basic, the form, or a private_key_jwt
assertion signed with joserfc). Every failure becomes a SignInError (FetchRefused for
the gate's refusal, TokenRefused for an `invalid_grant`) in words that carry no token.
"""

from __future__ import annotations

import base64
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from sidecar.errors import UpstreamUnavailable
from sidecar.upstream.oauth.choices import AuthServer, read_auth_server
from sidecar.upstream.oauth.discovery import authorization_server_addresses
from sidecar.upstream.oauth.documents import read_document
from sidecar.upstream.oauth.flow import SignInError
from sidecar.upstream.outbound import Outbound, OutboundRefused, Resolve

__all__ = ["ClientProof", "FetchRefused", "OAuthHttp", "TokenRefused", "Tokens"]

BODY_CAP = 64 * 1024
SECONDS = 20.0


class TokenRefused(SignInError):
    """The server refused a grant (an expired or revoked refresh token, a used code)."""


class FetchRefused(SignInError):
    """The outbound gate refused an address the server or its metadata named."""


@dataclass(frozen=True)
class ClientProof:
    client_id: str
    method: str  # none | client_secret_basic | client_secret_post | private_key_jwt
    secret: str | None = None
    private_key_pem: bytes | None = None
    key_id: str | None = None

    def apply(self, form: dict[str, str], headers: dict[str, str], audience: str) -> None:
        form["client_id"] = self.client_id  # beside Basic too: some servers look for it there
        if self.method == "client_secret_basic" and self.secret is not None:
            pair = f"{quote(self.client_id, safe='')}:{quote(self.secret, safe='')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
            return
        if self.method == "client_secret_post" and self.secret is not None:
            form["client_secret"] = self.secret
        elif self.method == "private_key_jwt" and self.private_key_pem is not None:
            form["client_assertion_type"] = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
            form["client_assertion"] = self._assertion(audience)

    def _assertion(self, audience: str) -> str:
        from joserfc import jwt
        from joserfc.jwk import ECKey, RSAKey

        assert self.private_key_pem is not None
        key: ECKey | RSAKey
        try:
            key, alg = ECKey.import_key(self.private_key_pem), "ES256"
        except ValueError:
            key, alg = RSAKey.import_key(self.private_key_pem), "RS256"
        now = int(time.time())
        claims = {"iss": self.client_id, "sub": self.client_id, "aud": audience, "iat": now, "exp": now + 120,
                  "jti": secrets.token_urlsafe(16)}
        header: dict[str, Any] = {"alg": alg, "typ": "JWT"}
        if self.key_id:
            header["kid"] = self.key_id
        return jwt.encode(header, claims, key, algorithms=[alg])


@dataclass(frozen=True)
class Tokens:
    access_token: str
    refresh_token: str | None
    expires_at: float | None
    scope: str | None

    @classmethod
    def read(cls, document: dict[str, Any], asked_scope: str | None, now: float) -> Tokens:
        token = document.get("access_token")
        kind = document.get("token_type", "bearer")
        if not isinstance(token, str) or not token or not isinstance(kind, str) or kind.lower() != "bearer":
            raise SignInError("the token endpoint answered without a bearer access token")
        expires = document.get("expires_in")
        # a lifetime past ten years is no lifetime we can trust (and 1e400 is no number)
        usable = isinstance(expires, (int, float)) and not isinstance(expires, bool) and 0 < expires < 3e8
        expires_at = now + float(expires) if usable and isinstance(expires, (int, float)) else None
        refresh = document.get("refresh_token")
        scope = document.get("scope")
        return cls(token, refresh if isinstance(refresh, str) and refresh else None, expires_at,
                   scope if isinstance(scope, str) else asked_scope)


class OAuthHttp:
    """The sidecar's own HTTP client for one server's sign-in; `close()` when done. Every
    address it reaches passes the outbound gate (`sidecar.upstream.outbound`), judged
    against the MCP server at `server_url`."""

    def __init__(self, server_url: str, resolve: Resolve | None = None) -> None:
        self.outbound = Outbound(server_url, resolve=resolve, seconds=SECONDS)

    async def close(self) -> None:
        await self.outbound.close()

    async def _send(self, method: str, url: str, same_origin: bool = False, **kw: Any) -> tuple[int, object]:
        try:
            answer = await self.outbound.fetch(method, url, same_origin=same_origin, cap=BODY_CAP, **kw)
        except UpstreamUnavailable as exc:
            if isinstance(exc, OutboundRefused):
                raise FetchRefused(exc.message) from None
            raise SignInError(f"the authorization server at {exc.message}") from None
        return answer.status, read_document(answer.body)

    async def get_json(self, url: str, same_origin: bool = False) -> tuple[int, object]:
        return await self._send("GET", url, same_origin, headers={"Accept": "application/json"})

    async def post_form(self, url: str, form: dict[str, str], proof: ClientProof | None = None,
                        audience: str | None = None) -> tuple[int, object]:
        headers = {"Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded"}
        if proof is not None:
            proof.apply(form, headers, audience or url)
        return await self._send("POST", url, data=form, headers=headers)

    async def post_json(self, url: str, document: dict[str, Any]) -> tuple[int, object]:
        headers = {"Accept": "application/json", "Content-Type": "application/json"}
        return await self._send("POST", url, data=json.dumps(document).encode(), headers=headers)

    # -- the steps -------------------------------------------------------------------

    async def auth_server(self, issuer: str) -> AuthServer:
        """The issuer's metadata from the first address that has it (the spec's order)."""
        for address in authorization_server_addresses(issuer):
            status, document = await self.get_json(address)
            if status == 200 and isinstance(document, dict):
                return read_auth_server(document, issuer)
        raise SignInError(f"the authorization server {issuer} publishes no metadata (RFC 8414 or OpenID discovery)")

    async def register(self, server: AuthServer, request: dict[str, Any]) -> tuple[str, str | None]:
        assert server.registration_endpoint is not None
        status, document = await self.post_json(server.registration_endpoint, request)
        if status not in (200, 201) or not isinstance(document, dict) or not isinstance(document.get("client_id"), str):
            raise SignInError(f"the authorization server refused to register the sidecar (HTTP {status})")
        secret = document.get("client_secret")
        return document["client_id"], secret if isinstance(secret, str) and secret else None

    async def token(self, server: AuthServer, form: dict[str, str], proof: ClientProof,
                    asked_scope: str | None) -> Tokens:
        # a client assertion names the issuer as its audience (RFC 7523bis; the token endpoint is older usage)
        status, document = await self.post_form(server.token_endpoint, form, proof,
                                                audience=server.issuer or server.token_endpoint)
        if status == 200 and isinstance(document, dict):
            return Tokens.read(document, asked_scope, time.time())
        error = document.get("error") if isinstance(document, dict) else None
        if error == "invalid_grant":
            raise TokenRefused("the authorization server refused the grant (invalid_grant)")
        if error == "invalid_client":
            raise SignInError("the authorization server did not accept the app's credentials (invalid_client)")
        named = f": {error}" if isinstance(error, str) and error.isascii() and len(error) < 40 else ""
        raise SignInError(f"the token endpoint refused the request (HTTP {status}{named})")

    async def revoke(self, endpoint: str, token: str, hint: str, proof: ClientProof) -> bool:
        """RFC 7009; the proof is the caller's choice (a configured secret is never sent here)."""
        status, _ = await self.post_form(endpoint, {"token": token, "token_type_hint": hint}, proof, endpoint)
        return status == 200


