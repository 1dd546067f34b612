"""One pending sign-in: PKCE S256, a random single-use `state`, five minutes to finish.

Owns the authorization URL (with `resource`, RFC 8707, and the scope) and the judgement
of the redirect that comes back: the right path, the flow's own `state`, not used
before, not expired, the `iss` parameter (RFC 9207) when the server advertises it, and
an `error` named plainly. Pure: the clock is passed in. The PKCE challenge comes from
authlib (RFC 7636); the verifier and state are `secrets.token_urlsafe`.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from sidecar.upstream.oauth.discovery import CALLBACK_PATH

__all__ = ["FLOW_SECONDS", "PendingFlow", "SignInError", "start_flow"]

FLOW_SECONDS = 300.0
_ERROR_WORDS = {
    "access_denied": "the sign-in was declined",
    "invalid_scope": "the server refused the scopes asked for",
    "unauthorized_client": "the server does not let this app sign in this way",
    "invalid_target": "the server refused the resource address",
}


class SignInError(Exception):
    """Why a sign-in did not finish, in words fit to print (no secret in them)."""

    def __init__(self, words: str) -> None:
        super().__init__(words)
        self.words = words


@dataclass
class PendingFlow:
    authorization_endpoint: str
    client_id: str
    redirect_uri: str
    resource: str
    scope: str | None
    issuer: str | None  # checked against `iss` when the server advertises RFC 9207
    iss_advertised: bool
    started_at: float
    state: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    verifier: str = field(default_factory=lambda: secrets.token_urlsafe(64))
    used: bool = False

    def secrets(self) -> list[str]:
        return [self.state, self.verifier]

    def authorization_url(self) -> str:
        from authlib.oauth2.rfc7636 import create_s256_code_challenge

        query = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "state": self.state,
            "code_challenge": create_s256_code_challenge(self.verifier),
            "code_challenge_method": "S256",
            "resource": self.resource,
        }
        if self.scope:
            query["scope"] = self.scope
        parts = urlsplit(self.authorization_endpoint)
        joined = "&".join(q for q in (parts.query, urlencode(query)) if q)
        return urlunsplit((parts.scheme, parts.netloc, parts.path, joined, ""))

    def accept(self, redirect: str, now: float) -> str:
        """The authorization code in a redirect URL, or SignInError saying why not."""
        if self.used:
            raise SignInError("this sign-in was already completed or ended; start a new one")
        if now - self.started_at > FLOW_SECONDS:
            self.used = True
            raise SignInError("the sign-in took longer than five minutes; start a new one")
        parts = urlsplit(redirect.strip())
        if parts.path.rstrip("/") != CALLBACK_PATH:
            raise SignInError(f"that is not the sign-in's return address (it ends in {CALLBACK_PATH}?...)")
        answer = dict(parse_qsl(parts.query, keep_blank_values=True))
        if not secrets.compare_digest(answer.get("state", ""), self.state):
            raise SignInError("the address does not belong to this sign-in (its state differs); nothing was done")
        self.used = True
        self._check_issuer(answer.get("iss"))
        error = answer.get("error")
        if error:
            raise SignInError(_ERROR_WORDS.get(error, f"the server ended the sign-in ({error[:40]})"))
        code = answer.get("code", "")
        if not code:
            raise SignInError("the return address carries no authorization code")
        return code

    def _check_issuer(self, iss: str | None) -> None:
        if iss is None:
            if self.iss_advertised:
                raise SignInError("the server promised to name itself on return (RFC 9207) but did not; "
                                  "nothing was done")
            return
        if self.issuer is not None and iss != self.issuer:
            raise SignInError("the sign-in came back from another authorization server than the one asked "
                              "(RFC 9207 `iss` differs); nothing was done")


def start_flow(*, authorization_endpoint: str, client_id: str, redirect_uri: str, resource: str,
               scope: str | None, issuer: str | None, iss_advertised: bool, now: float) -> PendingFlow:
    return PendingFlow(authorization_endpoint=authorization_endpoint, client_id=client_id,
                       redirect_uri=redirect_uri, resource=resource, scope=scope, issuer=issuer,
                       iss_advertised=iss_advertised, started_at=now)
