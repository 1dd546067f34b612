"""`omb-sidecar signin NAME` and `omb-sidecar signout NAME`: a person signs a URL server in
(authorization code with PKCE S256, in a browser) or out (revoke, then forget).

Owns the sign-in's steps in order: find the sign-in (locate), refuse an authorization
server without S256, choose the scopes and the client (a configured app on its fixed
port; a Client ID Metadata Document; a fresh registration; or say what to register),
listen on the loopback callback (or read one pasted redirect URL), trade the code for
tokens (with `resource`), seal them (and pin the issuer a configured credential was first
used with), then check the server with them. Refuses to print
or log a token, a code, the verifier or a client secret: each joins the redactor the
moment it exists. The loopback listener is `signin_listen`.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

from sidecar.config import ServerConfig, parse_server
from sidecar.errors import ConfigError
from sidecar.mounts.health import CheckResult
from sidecar.redact import Redactor
from sidecar.upstream.oauth import runtime
from sidecar.upstream.oauth.choices import (
    AuthServer,
    app_to_register_words,
    needs_s256,
    plan_client,
    registration_method,
    registration_request,
)
from sidecar.upstream.oauth.discovery import app_callback_port, callback_uri, canonical_resource, choose_scopes, union_scopes
from sidecar.upstream.oauth.exchange import OAuthHttp, Tokens
from sidecar.upstream.oauth.flow import FLOW_SECONDS, PendingFlow, SignInError, start_flow
from sidecar.upstream.oauth.grants import client_credentials, new_entry, proof_for, revocation_proof
from sidecar.upstream.oauth.issuers import check_issuer, pin_issuer
from sidecar.upstream.oauth.locate import Found, locate
from sidecar.upstream.oauth.sealed import TokenFile, TokenFileError, entry_secrets
from sidecar.upstream.webclient import sign_in_words
from sidecar_admin.session import Session, check_and_apply

__all__ = ["forget_address", "signin", "signout", "sign_in_view"]


class Say:
    """Printing through the redactor, one line at a time, flushed."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor

    def __call__(self, line: str) -> None:
        sys.stdout.write(self.redactor(line) + "\n")
        sys.stdout.flush()


def _server(session: Session, name: str) -> tuple[ServerConfig, TokenFile]:
    entry = session.file.servers().get(name)
    if not isinstance(entry, dict):
        raise ConfigError("", f"there is no server named '{name}'")
    server = parse_server(name, entry)
    if server.url is None:
        raise ConfigError("", f"'{name}' is a command, not a URL server: it has no sign-in")
    token_file = runtime.use(session.config, session.redactor)
    if token_file is None:
        raise ConfigError("", "there is nowhere to keep tokens: set oauth.tokenFile or data.folder")
    return server, token_file


# -- signin ---------------------------------------------------------------------------------


def signin(session: Session) -> int:
    """The command: 0 signed in and connected, 1 not signed in, 2 a usage error."""
    say = Say(session.redactor)
    name = session.args.name
    server, token_file = _server(session, name)
    try:
        asyncio.run(_sign_in(session, server, token_file, say))
    except (SignInError, TokenFileError) as exc:
        words = exc.words if isinstance(exc, SignInError) else exc.message
        say(f"Not signed in: {words}")
        return 1
    except KeyboardInterrupt:
        say("Not signed in: the sign-in was cancelled")
        return 1
    result = check_and_apply(session, name, say=False)
    if result.ok:
        say(f"Signed in: '{name}' is connected with {result.tools} tool{'' if result.tools == 1 else 's'}.")
        return 0
    say(f"Signed in, but the server is not connected: {result.reason}")
    return 1


async def _sign_in(session: Session, server: ServerConfig, token_file: TokenFile, say: Say) -> None:
    http = OAuthHttp(server.url or "")
    try:
        found = await locate(server, http)
        resource = found.resource.resource
        stored = token_file.read()
        previous = stored.get(canonical_resource(server.url or ""))
        check_issuer(server, found.auth.issuer, stored)  # before a person is sent to a browser
        if server.oauth is not None and server.oauth.grant == "client_credentials":
            tokens = await client_credentials(server, http, found.auth, resource, stored)
            _keep(session, server, token_file, found.auth, str(server.oauth.client_id), None, tokens, None)
            return
        needs_s256(found.auth)
        if found.auth.authorization_endpoint is None:
            raise SignInError("the authorization server names no authorization endpoint")
        scope = _scopes(server, found, previous)
        await _browser_flow(session, server, token_file, found, scope, http, say)
    finally:
        await http.close()


def _scopes(server: ServerConfig, found: Found, previous: dict[str, Any] | None) -> str | None:
    configured = server.oauth.scopes if server.oauth else None
    challenged = found.challenge.scope if found.challenge else None
    chosen = choose_scopes(configured, challenged, found.resource.scopes_supported)
    previous = previous or {}
    if previous.get("appKey") != runtime.app_key(server):
        return chosen
    wider = previous.get("wantSupported") and found.resource.scopes_supported
    return union_scopes(chosen, previous.get("wantScope"), " ".join(wider) if wider else None) or None


async def _browser_flow(session: Session, server: ServerConfig, token_file: TokenFile, found: Found,
                        scope: str | None, http: OAuthHttp, say: Say) -> None:
    from sidecar_admin.signin_listen import Callback, PortTaken, open_callback

    oauth = server.oauth
    configured = oauth.client_id if oauth else None
    plan = plan_client(found.auth, configured, oauth.client_metadata_url if oauth else None)
    fixed = app_callback_port(server) if plan.identity == "configured" else 0
    paste = bool(session.args.paste)
    try:
        callback: Callback = await open_callback(fixed, listen=not paste)
    except PortTaken:
        raise SignInError(f"another program holds port {fixed}, the registered app's return address "
                          f"({callback_uri(fixed)}); close it and sign in again") from None
    try:
        redirect_uri = callback_uri(callback.port)
        if plan.identity == "none":
            raise SignInError(app_to_register_words(found.auth.issuer, callback_uri(app_callback_port(server))))
        client_id, issued, method = plan.client_id, None, registration_method(found.auth.auth_methods)
        if plan.identity == "register":
            client_id, issued = await http.register(found.auth, registration_request(redirect_uri, scope, method))
            session.redactor.add([issued] if issued else [])
        assert client_id is not None
        flow = start_flow(authorization_endpoint=str(found.auth.authorization_endpoint), client_id=client_id,
                          redirect_uri=redirect_uri, resource=found.resource.resource, scope=scope,
                          issuer=found.auth.issuer, iss_advertised=found.auth.iss_advertised, now=time.time())
        session.redactor.add([flow.verifier])
        code = await _wait_for_code(flow, callback, paste, not session.args.no_browser and not paste, say)
        session.redactor.add([code])
        tokens = await _trade(server, found.auth, flow, code, {"clientId": client_id, "clientSecret": issued,
                                                                "clientAuth": method}, http, token_file.read())
        _keep(session, server, token_file, found.auth, client_id, issued, tokens, method)
    finally:
        await callback.close()


async def _wait_for_code(flow: PendingFlow, callback: Any, paste: bool, browser: bool, say: Say) -> str:
    url = flow.authorization_url()
    say("Open this address in a browser to sign in:")
    say(url)
    if browser:
        import webbrowser

        await asyncio.to_thread(webbrowser.open, url)
    if paste:
        say("After you approve, the browser shows a page that cannot load. Copy that page's full address "
            "from the address bar and paste it here:")
        line = await asyncio.wait_for(asyncio.to_thread(sys.stdin.readline), FLOW_SECONDS)
        return flow.accept(line, time.time())
    say("Waiting up to five minutes for the browser to come back...")
    try:
        return await asyncio.wait_for(callback.code_for(flow), FLOW_SECONDS)
    except asyncio.TimeoutError:
        flow.used = True
        raise SignInError("nobody came back from the browser within five minutes") from None


async def _trade(server: ServerConfig, auth: AuthServer, flow: PendingFlow, code: str, client: dict[str, Any],
                 http: OAuthHttp, pins: dict[str, Any]) -> Tokens:
    proof = proof_for(server, client, auth, pins)
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": flow.redirect_uri,
            "code_verifier": flow.verifier, "resource": flow.resource}
    return await http.token(auth, form, proof, flow.scope)


def _keep(session: Session, server: ServerConfig, token_file: TokenFile, auth: AuthServer, client_id: str,
          issued: str | None, tokens: Tokens, client_auth: str | None) -> None:
    entry = new_entry(alias=server.alias, auth=auth, client_id=client_id, issued_secret=issued, tokens=tokens,
                      app=runtime.app_key(server), client_auth=client_auth)
    session.redactor.add(entry_secrets(entry))
    with token_file.edit() as servers:
        servers[canonical_resource(server.url or "")] = entry
        pin_issuer(server, auth.issuer, servers)


# -- signout --------------------------------------------------------------------------------


def signout(session: Session) -> int:
    say = Say(session.redactor)
    name = session.args.name
    server, token_file = _server(session, name)
    resource = canonical_resource(server.url or "")
    try:
        entry = token_file.entry(resource)
    except TokenFileError as exc:
        say(f"Not signed out: {exc.message}")
        return 1
    if entry is None:
        say(f"'{name}' is not signed in.")
        return 0
    session.redactor.add(entry_secrets(entry))
    revoked = asyncio.run(_revoke(server, entry))
    token_file.forget([resource])
    _left_out(session, server, sign_in_words(name, "signed out"))
    say(f"Signed out of '{name}': {revoked}.")
    return 0


def _left_out(session: Session, server: ServerConfig, words: str) -> None:
    """The health record says the server needs sign-in, so faces leave it out."""
    health = session.health()
    if health is not None:
        health.record(server, CheckResult(name=server.alias, outcome="refused", reason=words, sign_in=True))


async def _revoke(server: ServerConfig, entry: dict[str, Any]) -> str:
    endpoint = entry.get("revocationEndpoint")
    if not isinstance(endpoint, str) or not endpoint:
        return "the server offers no revocation, so its tokens were forgotten here"
    http = OAuthHttp(server.url or "")
    try:
        proof = revocation_proof(server, entry)
        done: dict[str, bool] = {}
        for kind in ("refresh_token", "access_token"):
            token = entry.get("refreshToken" if kind == "refresh_token" else "accessToken")
            if isinstance(token, str) and token:
                done[kind] = await http.revoke(endpoint, token, kind, proof)
    except SignInError as exc:
        return f"the tokens were forgotten, but revoking them failed ({exc.words})"
    finally:
        await http.close()
    if done and all(done.values()):
        return "its tokens were revoked and forgotten"
    if done.get("refresh_token"):
        return ("its refresh token was revoked and its tokens forgotten (the server did not revoke the access "
                "token, which lapses when it expires)")
    return "the server did not confirm the revocation; its tokens were forgotten here"


def forget_address(session: Session, url: str) -> None:
    """Drop the tokens kept for this address (no revocation: the server is gone from the config)."""
    token_file = runtime.use(session.config, session.redactor)
    if token_file is not None:
        try:
            token_file.forget([canonical_resource(url)])
        except TokenFileError as exc:
            Say(session.redactor)(f"note: {exc.message}")


# -- what `servers list/show` say -----------------------------------------------------------


def sign_in_view(session: Session, name: str, entry: dict[str, Any], last_sign_in: bool) -> dict[str, Any]:
    """The sign-in words for one URL entry: needs sign-in, signed in (expires in ...), or
    sign-in refused; and the fixed redirect URI of a configured app."""
    try:
        server = parse_server(name, entry)
    except ConfigError:
        return {}
    if server.url is None:
        return {}
    view: dict[str, Any] = {}
    if server.oauth is not None and server.oauth.client_id:
        view["redirectUri"] = callback_uri(app_callback_port(server))
    token_file = runtime.use(session.config, session.redactor)
    try:
        stored = token_file.entry(canonical_resource(server.url)) if token_file is not None else None
    except TokenFileError as exc:
        return {**view, "signIn": "token file unreadable", "signInReason": exc.message}
    if stored is not None and stored.get("appKey") == runtime.app_key(server):
        state = stored.get("state")
        if state == "signed-in":
            view["signIn"] = "signed in" + _expiry(stored.get("expiresAt"))
        elif state == "refused":
            view["signIn"] = "sign-in refused"
        else:
            view["signIn"] = "needs sign-in"
    elif last_sign_in or server.oauth is not None:
        view["signIn"] = "needs sign-in"
    return view


def _expiry(expires_at: object) -> str:
    if not isinstance(expires_at, (int, float)):
        return ""
    left = int(expires_at - time.time())
    if left <= 0:
        return " (expired; it is renewed on next use)"
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if left >= size:
            return f" (expires in {left // size} {unit})"
    return f" (expires in {left} s)"
