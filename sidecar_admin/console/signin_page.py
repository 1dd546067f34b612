"""Sign in from any browser, and Sign out, on the console.

Owns the sign-in's pending flows (keyed by their single-use `state`) between the page
that starts one and the address the provider sends the browser back to. Over https, with
`console.publicUrl` set, the provider returns to the console itself at
`/console/mcp-oauth/callback`; otherwise (or for a registered app, whose return address is
fixed on loopback) the page takes the pasted return address. Every step is the command's
own (`omb-sidecar signin`): locate, S256 required, the scopes and the client, PKCE, the
state and issuer checks of `PendingFlow.accept`, the code traded with `resource`, the
tokens sealed; then the Test. Refuses an unknown or spent state, a late return, another
issuer. The verifier, code and tokens join the redactor the moment they exist.

The return address is reached by the provider's redirect, which carries no SameSite=Strict
cookie: it is admitted by its unguessable, single-use state instead (and PKCE binds the
code to this sidecar).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qs, urlsplit

from aiohttp import web

from sidecar.config import ServerConfig
from sidecar.front.http.console_door import ConsoleScene
from sidecar.errors import SidecarError
from sidecar.upstream.oauth.discovery import CALLBACK_PATH, app_callback_port, callback_uri, canonical_resource
from sidecar_admin.console import acts
from sidecar_admin.console.guard import Act, ConsoleSession, Page, Route
from sidecar_admin.console.pages import Escape, layout, notice, post_form
from sidecar_admin.session import Session

if TYPE_CHECKING:
    from sidecar.upstream.oauth.choices import AuthServer
    from sidecar.upstream.oauth.flow import PendingFlow
    from sidecar.upstream.oauth.sealed import TokenFile

__all__ = ["SignIn"]

RETURN_PATH = "/console" + CALLBACK_PATH


class Console(Protocol):
    """What the sign-in page uses of the console (`sidecar_admin.console.site.Console`)."""

    scene: ConsoleScene
    esc: Escape

    def act_route(self, act: Act) -> Route: ...
    def page_route(self, page: Page) -> Route: ...
    def html(self, text: str, status: int = 200) -> web.Response: ...
    async def in_thread(self, work: Callable[[Session], Any]) -> Any: ...
    def join(self, server: ServerConfig | None) -> None: ...
    async def servers_page(self, session: ConsoleSession, said: str = "") -> str: ...


@dataclass
class Pending:
    name: str
    server: ServerConfig
    flow: PendingFlow
    auth: AuthServer
    client: dict[str, Any]
    token_file: TokenFile


class SignIn:
    def __init__(self, console: Console) -> None:
        self.console = console
        self.pending: dict[str, Pending] = {}  # state -> the flow it belongs to

    def add_routes(self, router: web.UrlDispatcher) -> None:
        act = self.console.act_route
        router.add_post("/console/servers/{name}/signin", act(self._start))
        router.add_get("/console/servers/{name}/signin", self.console.page_route(self._again))
        router.add_post("/console/servers/{name}/signin/paste", act(self._paste))
        router.add_post("/console/servers/{name}/signout", act(self._signout))
        router.add_get(RETURN_PATH, self._returned)

    def _return_address(self, server: ServerConfig, registered: bool) -> str:
        public = self.console.scene.config.console.public_url or ""
        if public.startswith("https://") and not registered:
            return public.rstrip("/") + RETURN_PATH
        return callback_uri(app_callback_port(server))  # nothing listens: the person pastes it

    # -- start ----------------------------------------------------------------------------

    async def _start(self, request: web.Request, session: ConsoleSession, form: dict[str, Any]) -> str:
        from sidecar.upstream.oauth.flow import SignInError

        name = request.match_info["name"]
        try:
            admin: Session = await self.console.in_thread(lambda s: s)
            pending = await self._begin(admin, name)
        except (SignInError, SidecarError) as exc:
            return self._page(session, notice(self.console.esc(f"Not signed in: {_words(exc)}"), "bad"))
        if pending is None:  # client credentials: signed in already, no browser needed
            return await self._tested(session, name)
        self.pending = {k: p for k, p in self.pending.items() if not p.flow.used}
        self.pending[pending.flow.state] = pending
        return self._page(session, self._steps(session, pending))

    async def _begin(self, admin: Session, name: str) -> Pending | None:
        from sidecar.upstream.oauth.choices import (
            app_to_register_words,
            needs_s256,
            plan_client,
            registration_method,
            registration_request,
        )
        from sidecar.upstream.oauth.exchange import OAuthHttp
        from sidecar.upstream.oauth.flow import SignInError, start_flow
        from sidecar.upstream.oauth.grants import client_credentials
        from sidecar.upstream.oauth.issuers import check_issuer
        from sidecar.upstream.oauth.locate import locate
        from sidecar_admin.signin_cmd import _keep, _scopes, _server

        server, token_file = _server(admin, name)
        http = OAuthHttp(server.url or "")
        try:
            found = await locate(server, http)
            stored = token_file.read()
            check_issuer(server, found.auth.issuer, stored)  # before a person is sent to a browser
            if server.oauth is not None and server.oauth.grant == "client_credentials":
                tokens = await client_credentials(server, http, found.auth, found.resource.resource, stored)
                _keep(admin, server, token_file, found.auth, str(server.oauth.client_id), None, tokens, None)
                return None
            needs_s256(found.auth)
            if found.auth.authorization_endpoint is None:
                raise SignInError("the authorization server names no authorization endpoint")
            scope = _scopes(server, found, stored.get(canonical_resource(server.url or "")))
            oauth = server.oauth
            plan = plan_client(found.auth, oauth.client_id if oauth else None, oauth.client_metadata_url if oauth else None)
            if plan.identity == "none":
                raise SignInError(app_to_register_words(found.auth.issuer, callback_uri(app_callback_port(server))))
            redirect = self._return_address(server, plan.identity == "configured")
            client_id, issued, method = plan.client_id, None, registration_method(found.auth.auth_methods)
            if plan.identity == "register":
                client_id, issued = await http.register(found.auth, registration_request(redirect, scope, method))
                admin.redactor.add([issued] if issued else [])
        finally:
            await http.close()
        assert client_id is not None
        flow = start_flow(authorization_endpoint=str(found.auth.authorization_endpoint), client_id=client_id,
                          redirect_uri=redirect, resource=found.resource.resource, scope=scope,
                          issuer=found.auth.issuer, iss_advertised=found.auth.iss_advertised, now=time.time())
        admin.redactor.add([flow.verifier])
        return Pending(name, server, flow, found.auth,
                       {"clientId": client_id, "clientSecret": issued, "clientAuth": method}, token_file)

    def _steps(self, session: ConsoleSession, pending: Pending) -> str:
        esc = self.console.esc
        link = (f'<p><a class="button" href="{esc(pending.flow.authorization_url())}" rel="noopener noreferrer" '
                f'target="_blank">Open {esc(pending.name)}\'s sign-in page</a></p>')
        if pending.flow.redirect_uri.endswith(RETURN_PATH) and pending.flow.redirect_uri.startswith("https://"):
            return link + "<p>After you approve, the provider brings you back here.</p>"
        field = ('<label for="address">After you approve, the browser shows a page that cannot load. Copy that '
                 'page\'s full address from the address bar and paste it here</label>'
                 '<input id="address" name="address" type="text" autocomplete="off" required spellcheck="false">')
        return link + post_form(f"/console/servers/{esc(pending.name)}/signin/paste", session.csrf, field,
                                "Finish signing in", css="stack")

    async def _again(self, request: web.Request, session: ConsoleSession) -> str:
        """The sign-in still waiting for this server (the provider was opened in this tab)."""
        name = request.match_info["name"]
        waiting = [p for p in self.pending.values() if p.name == name and not p.flow.used]
        if not waiting:
            return self._page(session, notice(self.console.esc(f"No sign-in of '{name}' is waiting: start one "
                                                               "with Sign in on the Servers page."), "info"))
        return self._page(session, self._steps(session, max(waiting, key=lambda p: p.flow.started_at)))

    # -- finish ---------------------------------------------------------------------------

    async def _paste(self, request: web.Request, session: ConsoleSession, form: dict[str, Any]) -> str:
        address = form.get("address")
        address = address.strip() if isinstance(address, str) else ""
        state = parse_qs(urlsplit(address).query).get("state", [""])[0]
        pending = self.pending.get(state)
        if pending is None or pending.name != request.match_info["name"]:
            return self._page(session, notice("Not signed in: that address belongs to no sign-in started here; "
                                              "start a new one", "bad"))
        said = await self._finish(pending, address)
        return self._page(session, said)

    async def _returned(self, request: web.Request) -> web.StreamResponse:
        pending = self.pending.get(request.query.get("state", ""))
        if pending is None:
            return self.console.html(layout("Sign in", notice("Not signed in: this return address belongs to no "
                                                              "sign-in started here; start a new one", "bad"), None), 400)
        said = await self._finish(pending, f"{CALLBACK_PATH}?{request.query_string}")
        body = said + '<p><a href="/console/servers">Back to the servers</a></p>'
        return self.console.html(layout("Sign in", body, None))

    async def _finish(self, pending: Pending, address: str) -> str:
        from sidecar.upstream.oauth.exchange import OAuthHttp
        from sidecar.upstream.oauth.flow import SignInError
        from sidecar_admin.signin_cmd import _keep, _server, _trade

        esc = self.console.esc
        try:
            code = pending.flow.accept(address, time.time())
            self.console.scene.redactor.add([code])
            http = OAuthHttp(pending.server.url or "")
            try:
                pins = await asyncio.to_thread(pending.token_file.read)
                tokens = await _trade(pending.server, pending.auth, pending.flow, code, pending.client, http, pins)
            finally:
                await http.close()

            def keep(admin: Session) -> acts.Tested:
                server, token_file = _server(admin, pending.name)
                _keep(admin, server, token_file, pending.auth, pending.client["clientId"],
                      pending.client["clientSecret"], tokens, pending.client["clientAuth"])
                return acts.test_server(admin, pending.name)

            tested: acts.Tested = await self.console.in_thread(keep)
        except (SignInError, SidecarError) as exc:
            return notice(esc(f"Not signed in: {_words(exc)}"), "bad")
        finally:
            self.pending.pop(pending.flow.state, None)
        await self._rejoin(pending.name, tested)
        if tested.result.ok:
            return notice(esc(f"Signed in: '{pending.name}' is connected with {tested.result.tools} tools."))
        return notice(esc(f"Signed in, but the server is not connected: {tested.result.reason}"), "bad")

    async def _rejoin(self, name: str, tested: acts.Tested) -> None:
        """A server that waited for sign-in starts again with its tokens."""
        for face in self.console.scene.faces.values():
            if name in face.pool.upstreams and tested.server is not None:
                await face.unmount(name)
        self.console.join(tested.server)

    async def _tested(self, session: ConsoleSession, name: str) -> str:
        tested: acts.Tested = await self.console.in_thread(lambda s: acts.test_server(s, name))
        await self._rejoin(name, tested)
        return self._page(session, notice(self.console.esc(" ".join(tested.lines)), "ok" if tested.result.ok else "bad"))

    # -- sign out -------------------------------------------------------------------------

    async def _signout(self, request: web.Request, session: ConsoleSession, form: dict[str, Any]) -> str:
        name = request.match_info["name"]
        try:
            words: str = await self.console.in_thread(lambda s: _sign_out(s, name))
        except SidecarError as exc:
            words = exc.message
        for face in self.console.scene.faces.values():
            if name in face.pool.upstreams:
                await face.unmount(name)  # its tokens are gone: it is left out until a person signs in
        return await self.console.servers_page(session, notice(self.console.esc(words), "info"))

    def _page(self, session: ConsoleSession, body: str) -> str:
        return layout("Sign in", body + '<p><a href="/console/servers">Back to the servers</a></p>', session.csrf)


def _sign_out(admin: Session, name: str) -> str:
    """`omb-sidecar signout NAME`: revoke where the server offers it, forget, leave it out."""
    from sidecar.upstream.oauth.sealed import TokenFileError, entry_secrets
    from sidecar.upstream.webclient import sign_in_words
    from sidecar_admin.signin_cmd import _left_out, _revoke, _server

    server, token_file = _server(admin, name)
    resource = canonical_resource(server.url or "")
    try:
        entry = token_file.entry(resource)
    except TokenFileError as exc:
        return f"Not signed out: {exc.message}"
    if entry is None:
        return f"'{name}' is not signed in."
    admin.redactor.add(entry_secrets(entry))
    revoked = asyncio.run(_revoke(server, entry))
    token_file.forget([resource])
    _left_out(admin, server, sign_in_words(name, "signed out"))
    return f"Signed out of '{name}': {revoked}."


def _words(exc: Exception) -> str:
    return str(getattr(exc, "words", None) or getattr(exc, "message", None) or type(exc).__name__)
