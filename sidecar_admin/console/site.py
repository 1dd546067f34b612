"""The console's routes under `/console`: login, the four pages, and their acts.

Owns the order every request meets: a page needs a live session (else the login form);
a POST needs a live session (else 403, no form is served or taken without the cookie),
an Origin that is this host and the session's CSRF token. Each act runs the command's
own steps (`acts`, `approval`) in a worker thread, then lets the running faces know: a
server that passed its Test joins the face that runs it; an approval makes the face
judge its listings again. Every answer carries the strict headers of `guard`.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable
from importlib import resources
from typing import Any

from aiohttp import web

from sidecar.config import ServerConfig
from sidecar.errors import ConfigError
from sidecar.front.http.console_door import ConsoleScene
from sidecar.mounts.health import health_file_for
from sidecar_admin.console import acts, approval, screens
from sidecar_admin.console.guard import COOKIE, PRE_COOKIE, Act, ConsoleSession, Guard, Page, Route, security_headers
from sidecar_admin.console.pages import Escape, layout, login_page, notice
from sidecar_admin.console.state import CallRing, server_rows
from sidecar_admin.session import Session
from sidecar_admin.store import ConfigFile

__all__ = ["Console"]

log = logging.getLogger(__name__)

LOGIN_SECONDS = 10 * 60.0
MAX_LOGIN_FORMS = 256  # login forms handed out and not used yet (the oldest lapse first)


class Console:
    def __init__(self, scene: ConsoleScene) -> None:
        self.scene = scene
        public = scene.config.console.public_url or ""
        self.guard = Guard(scene.settings.tokens, secure=public.startswith("https://"))
        self.esc = Escape(scene.redactor)
        self.ring = CallRing()
        self.ring.watch(scene.faces)
        self.logins: dict[str, float] = {}  # one-time login form tokens -> when they lapse

    def add_routes(self, app: web.Application) -> None:
        router = app.router
        router.add_get("/console", self._home)
        router.add_get("/console/static/console.css", self._css)
        router.add_get("/console/login", self._login_form)
        router.add_post("/console/login", self._login)
        router.add_post("/console/logout", self.act_route(self._logout))
        for path, page in (("servers", self._servers), ("calls", self._calls), ("held", self._held),
                           ("add", self._add_form), ("servers/{name}/fill", self._fill_form)):
            router.add_get(f"/console/{path}", self.page_route(page))
        router.add_get("/console/calls.json", self._calls_json)
        for path, act in (("servers/{name}/test", self._test), ("held/{name}/approve", self._approve),
                          ("add", self._add), ("servers/{name}/fill", self._fill)):
            router.add_post(f"/console/{path}", self.act_route(act))
        from sidecar_admin.console.signin_page import SignIn

        SignIn(self).add_routes(router)

    # -- answers ----------------------------------------------------------------------

    def html(self, text: str, status: int = 200) -> web.Response:
        response = web.Response(text=text, status=status, content_type="text/html", charset="utf-8")
        security_headers(response)
        return response

    def refuse(self, status: int, words: str) -> web.Response:
        response = web.Response(text=words + "\n", status=status, content_type="text/plain")
        security_headers(response)
        return response

    def redirect(self, where: str) -> web.Response:
        response = web.Response(status=303, headers={"Location": where})
        security_headers(response)
        return response

    def page_route(self, page: Page) -> Route:
        async def serve(request: web.Request) -> web.StreamResponse:
            session = self.guard.session_of(request)
            if session is None:
                return self.redirect("/console/login")
            return self.html(await page(request, session))
        return serve

    def act_route(self, act: Act) -> Route:
        async def serve(request: web.Request) -> web.StreamResponse:
            session = self.guard.session_of(request)
            if session is None:
                return self.refuse(403, "Forbidden: log in to the console first")
            if not self.guard.same_origin(request):
                return self.refuse(403, "Forbidden: this form did not come from the console")
            form = dict(await request.post())
            if not self.guard.csrf_matches(session.csrf, form.get("csrf")):
                return self.refuse(403, "Forbidden: the form's CSRF token is missing or wrong")
            answer = await act(request, session, form)
            return self.html(answer) if isinstance(answer, str) else answer
        return serve

    async def in_thread(self, work: Callable[[Session], Any]) -> Any:
        """Run an admin act on a fresh session of the config file, off the event loop."""
        source = self.scene.config.source
        if source is None:
            raise ConfigError("", "the config was not read from a file: nothing can be changed from here")
        return await asyncio.to_thread(lambda: work(acts.admin_session(source, self.scene.redactor)))

    def join(self, server: ServerConfig | None) -> None:
        """A server that passed its Test starts in the faces that serve it (a single front's
        face takes any; a gateway's bot takes the servers its own config lists)."""
        if server is None:
            return
        for face in self.scene.faces.values():
            listed = any(s.alias == server.alias for s in face.config.servers)
            if server.alias not in face.pool.upstreams and (listed or not self.scene.gateway):
                log.warning("upstream '%s' passed its Test on the console: it joins face '%s'", server.alias, face.name)
                face.mount(server)

    # -- login --------------------------------------------------------------------------

    async def _home(self, request: web.Request) -> web.StreamResponse:
        return self.redirect("/console/servers" if self.guard.session_of(request) else "/console/login")

    async def _css(self, request: web.Request) -> web.StreamResponse:
        text = resources.files("sidecar_admin.console").joinpath("static/console.css").read_text("utf-8")
        response = web.Response(text=text, content_type="text/css")
        security_headers(response)
        return response

    async def _login_form(self, request: web.Request, words: str = "") -> web.StreamResponse:
        now = time.time()
        self.logins = {k: v for k, v in self.logins.items() if v > now}
        while len(self.logins) >= MAX_LOGIN_FORMS:
            self.logins.pop(min(self.logins, key=self.logins.__getitem__))
        token = secrets.token_urlsafe(32)
        self.logins[token] = now + LOGIN_SECONDS
        response = self.html(login_page(token, words), 403 if words else 200)
        self.guard.set_cookie(response, PRE_COOKIE, token, request, LOGIN_SECONDS)
        return response

    async def _login(self, request: web.Request) -> web.StreamResponse:
        if not self.guard.same_origin(request):
            return self.refuse(403, "Forbidden: this form did not come from the console")
        form = await request.post()
        bound = request.cookies.get(PRE_COOKIE, "")
        if not bound or bound not in self.logins or not self.guard.csrf_matches(bound, form.get("csrf")):
            return self.refuse(403, "Forbidden: the login form's token is missing or wrong; load the form again")
        self.logins.pop(bound, None)
        if self.guard.guessing():
            return self.refuse(429, "Too Many Requests: too many wrong tokens; wait a minute")
        typed = form.get("token")
        if not isinstance(typed, str) or not self.guard.token_matches(typed):
            return await self._login_form(request, "That is not the operator's token.")
        session = self.guard.open_session()
        response = self.redirect("/console/servers")
        self.guard.set_cookie(response, COOKIE, session.ident, request)
        self.guard.drop_cookie(response, PRE_COOKIE)
        return response

    async def _logout(self, request: web.Request, session: ConsoleSession,
                      form: dict[str, Any]) -> web.StreamResponse:
        self.guard.close_session(request)
        response = self.redirect("/console/login")
        self.guard.drop_cookie(response, COOKIE)
        return response

    # -- servers ------------------------------------------------------------------------

    async def servers_page(self, session: ConsoleSession, said: str = "") -> str:
        config = self.scene.config
        file = ConfigFile(config.source) if config.source else None
        document = await asyncio.to_thread(file.read) if file else {}
        entries = document.get("mcpServers", {}) if isinstance(document.get("mcpServers"), dict) else {}
        health = health_file_for(config)
        records = await asyncio.to_thread(health.load) if health else {}
        rows = server_rows(entries, document, self.scene.faces, records, config)
        body = screens.servers_body(self.esc, session.csrf, rows, self.scene.gateway, said)
        return layout("Servers", body, session.csrf)

    async def _servers(self, request: web.Request, session: ConsoleSession) -> str:
        return await self.servers_page(session)

    async def _test(self, request: web.Request, session: ConsoleSession, form: dict[str, Any]) -> str:
        name = request.match_info["name"]
        try:
            tested: acts.Tested = await self.in_thread(lambda s: acts.test_server(s, name))
        except ConfigError as exc:
            return await self.servers_page(session, notice(self.esc(exc.message), "bad"))
        self.join(tested.server)
        return await self.servers_page(session, screens.words_box(self.esc, tested.lines, tested.result.ok))

    # -- calls --------------------------------------------------------------------------

    async def _calls(self, request: web.Request, session: ConsoleSession) -> str:
        return layout("Calls", screens.calls_body(self.esc, self.ring.lines, self.ring.count), session.csrf, refresh=3)

    async def _calls_json(self, request: web.Request) -> web.StreamResponse:
        if self.guard.session_of(request) is None:
            return self.refuse(403, "Forbidden: log in to the console first")
        lines = [{"at": c.at, "tool": self.scene.redactor(c.tool), "bot": c.bot, "outcome": c.outcome, "ms": c.ms,
                  "bytesIn": c.bytes_in, "bytesOut": c.bytes_out, "held": c.held} for c in self.ring.lines]
        response = web.json_response({"seen": self.ring.count, "calls": lines})
        security_headers(response)
        return response

    # -- held tools ---------------------------------------------------------------------

    def held_servers(self) -> list[screens.HeldServer]:
        found: dict[str, screens.HeldServer] = {}
        for face in self.scene.faces.values():
            trust = face.gate.trust
            for alias, change in trust.held.values():
                upstream = face.pool.upstreams.get(alias)
                tools = {t.get("name"): t for t in upstream.listing.tools} if upstream else {}
                if change.tool not in tools:
                    continue
                entry = found.setdefault(alias, (alias, [], trust.pins_for_review(alias)))
                if all(c.tool != change.tool for c, _ in entry[1]):
                    entry[1].append((change, tools[change.tool]))
        return list(found.values())

    async def _held(self, request: web.Request, session: ConsoleSession) -> str:
        return self.held_page(session)

    def held_page(self, session: ConsoleSession, said: str = "") -> str:
        return layout("Held tools", screens.held_body(self.esc, session.csrf, self.held_servers(), said), session.csrf)

    async def _approve(self, request: web.Request, session: ConsoleSession, form: dict[str, Any]) -> str:
        name = request.match_info["name"]
        tools = [form["tool"]] if isinstance(form.get("tool"), str) and form["tool"] else []
        try:
            approved, words = await self.in_thread(lambda s: approval.approve(s, name, tools, session.who))
        except ConfigError as exc:
            return self.held_page(session, notice(self.esc(exc.message), "bad"))
        if not approved:
            return self.held_page(session, notice(self.esc(f"{name}: nothing approved: {words}"), "bad"))
        approval.audit_approval(self.scene.faces, name, approved, session.who)
        for face in self.scene.faces.values():
            face.tools_page(0)  # judges the listings again now, and tells the engines (list_changed)
        said = f"Approved {len(approved)} tool definition{'' if len(approved) == 1 else 's'} of '{name}'."
        return self.held_page(session, notice(self.esc(said)))

    # -- add ----------------------------------------------------------------------------

    async def _add_form(self, request: web.Request, session: ConsoleSession) -> str:
        return layout("Add a server", screens.add_body(session.csrf), session.csrf)

    async def _add(self, request: web.Request, session: ConsoleSession, form: dict[str, Any]) -> str:
        paste = form.get("paste")
        if not isinstance(paste, str) or not paste.strip():
            return layout("Add a server", screens.add_body(session.csrf, notice("Paste something first.", "bad")),
                          session.csrf)
        try:
            pasted: acts.Pasted = await self.in_thread(lambda s: acts.add_paste(s, paste))
        except ConfigError as exc:
            return layout("Add a server", screens.add_body(session.csrf, notice(self.esc(exc.message), "bad")),
                          session.csrf)
        parts = [screens.import_box(self.esc, pasted.result)]
        for tested in pasted.tested:
            self.join(tested.server)
            parts.append(screens.words_box(self.esc, tested.lines, tested.result.ok))
        for added in pasted.result.added:
            if added.needs:
                parts.append(screens.fill_form(self.esc, session.csrf, added.name, acts.needs_of(added.entry)))
        body = "".join(parts) + '<p><a href="/console/servers">Back to the servers</a></p>'
        return layout("Add a server", body, session.csrf)

    async def _fill_form(self, request: web.Request, session: ConsoleSession) -> str:
        name = request.match_info["name"]
        source = self.scene.config.source
        entry = (await asyncio.to_thread(ConfigFile(source).servers)).get(name) if source else None
        if not isinstance(entry, dict):
            return layout("Fill values", notice(self.esc(f"there is no server named '{name}'"), "bad"), session.csrf)
        return layout("Fill values", screens.fill_form(self.esc, session.csrf, name, acts.needs_of(entry)),
                      session.csrf)

    async def _fill(self, request: web.Request, session: ConsoleSession, form: dict[str, Any]) -> str:
        name = request.match_info["name"]
        values = {(k.split(":", 2)[1], k.split(":", 2)[2]): v for k, v in form.items()
                  if k.startswith("v:") and k.count(":") >= 2 and isinstance(v, str)}
        try:
            tested: acts.Tested = await self.in_thread(lambda s: acts.fill_values(s, name, values))
        except ConfigError as exc:
            return await self.servers_page(session, notice(self.esc(exc.message), "bad"))
        self.join(tested.server)
        return await self.servers_page(session, screens.words_box(self.esc, tested.lines, tested.result.ok))
