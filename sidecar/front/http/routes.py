"""The Streamable HTTP front: MCP at `/mcp` (and `/mcp/<face>`), one engine session
per `Mcp-Session-Id`, and the stateless 2026-07-28 requests beside them.

Owns the routes and the order of admission, which each route keeps itself (no middleware
runs on `/mcp`): Host, then Origin (403), then the bearer token (401), then the body cap
(413, judged before buffering) and its read timeout (`sidecar.front.http.answers`); a
path no route takes is admitted the same way before its 404 or 405.
A POST's requests go to the session's dispatcher and their answers come back as JSON,
or as an event stream when progress or upstream requests must flow; the GET stream
carries the rest. `/health` says "ok" and nothing else; `/metrics` (when metrics are
on) is admitted like `/mcp`. Refuses new work while draining (503); a call still in
flight when the drain time is over gets its one answer, an error naming the shutdown,
in the JSON or event stream its POST waits on, before the sessions close.

Who is calling is the identity of the bearer token presented (`caller_identity`): a
session belongs to the identity that opened it (to any other it is "Session not found"),
and the held results of stateless requests are bound to the identity.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from aiohttp import web

from sidecar.errors import INVALID_PARAMS, INVALID_REQUEST
from sidecar.front.eras.held import Round
from sidecar.front.eras.listen_resources import ResourceSubscriptions
from sidecar.front.eras.rounds import HeldCalls, takes_rounds
from sidecar.front.http.admission import HostRule, Refusal, admit
from sidecar.front.http.answers import (
    TooLarge,
    answer_exchange,
    body_at_hand,
    early_writer,
    json_answer,
    read_body,
    stream,
    stream_events,
)
from sidecar.front.http.console_door import ConsoleSite, is_console_path
from sidecar.front.http.listener import FrontSettings
from sidecar.front.http.listener import Handler as AppHandler
from sidecar.front.http.sessions import Exchange, HttpSession, SessionTable
from sidecar.front.http.stateless import (
    Listen,
    discover_result,
    envelope_of,
    http_status,
    judge,
    stamp_answer,
    stamp_for,
)
from sidecar.front.methods import server_capabilities
from sidecar.gate.budget.held import CallerScope
from sidecar.hub.face import Face
from sidecar.redact import Redactor
from sidecar.wire import (
    FrameRejected,
    Notification,
    Request,
    Response,
    decode_engine_frame,
    encode_error,
    encode_result,
)
from sidecar.wire.requests import PROGRESS_TOKEN, progress_token, request_progress_token
from sidecar.wire.versions import CAPABILITIES_KEY, HANDSHAKE_VERSIONS, MODERN_VERSION

__all__ = ["HttpFront"]

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
SESSION_HEADER = "Mcp-Session-Id"
SESSION_NOT_FOUND = -32001
_LAST_WORDS_SECONDS = 2.0  # the shutdown errors' time to be written, at most


def _rpc_error(ident: Any, code: int, message: str, status: int, data: Any = None,
               headers: dict[str, str] | None = None) -> web.StreamResponse:
    return json_answer(encode_error(ident, code, message, data), status, headers)


def _refuse(status: int, words: str, headers: dict[str, str] | None = None) -> web.StreamResponse:
    return _rpc_error(None, INVALID_REQUEST, words, status, headers=headers)


MEMO_ENTRIES = 64  # admitted (Host, Origin, Authorization) triples remembered, at most
Memo = dict[tuple[str | None, str | None, str | None], str]


def admitted(request: web.Request, rule: HostRule, tokens: tuple[str, ...], open_path: bool,
             memo: Memo | None = None) -> str | web.StreamResponse:
    """`admission.admit` on an aiohttp request: the caller (or `OPEN`), else the refusal.

    With `memo` (a path that is not open), a request whose Host, Origin and Authorization
    are exactly those of one admitted before is that caller again without the judgement.
    Only admitted triples are kept (a refusal is judged every time; at most `MEMO_ENTRIES`),
    and a look-up compares values only when their hashes (keyed per process) match, so a
    presented token is never compared byte by byte with one it does not equal: the
    constant-time comparison of `admit` still judges every new token."""
    headers = request.headers
    key = (headers.get("Host"), headers.get("Origin"), headers.get("Authorization"))
    if memo is not None:
        known = memo.get(key)
        if known is not None:
            return known
    caller = admit(rule, tokens, key[0], key[1], key[2], open_path)
    if isinstance(caller, Refusal):
        return _refuse(caller.status, caller.words, dict(caller.headers) if caller.headers else None)
    if memo is not None and not open_path and len(memo) < MEMO_ENTRIES:
        memo[key] = caller
    return caller


class HttpFront:
    def __init__(self, face: Face, redactor: Redactor, settings: FrontSettings,
                 console: ConsoleSite | None = None, metrics: Any = None) -> None:
        self.face = face
        self.console = console  # the operator's page, when `console.enabled` (it admits by its own cookie)
        self.settings = settings
        self.rule = HostRule(settings.host, settings.allowed_hosts)
        self.tokens = settings.tokens  # read once: the property builds a tuple
        self.memo: Memo = {}  # the callers of admitted requests (`admitted`)
        self.scopes: dict[str, CallerScope] = {}  # each caller's held scope, made once
        self.table = SessionTable(face, redactor, settings.max_sessions, settings.idle_seconds)
        self.held = HeldCalls(face, redactor)  # stateless calls whose upstream asked (sidecar.front.eras)
        self.draining = False
        self.posts = 0  # POSTs being served right now, for the drain
        self.listens: set[Listen] = set()
        self.resource_subscriptions = ResourceSubscriptions(face)  # held upstream for the listens' resources
        self.metrics: Any = metrics  # a FrontMetrics when metrics are on (sidecar.gate.observers.metrics)

    def app(self) -> web.Application:
        """The routes, each admitting its own requests (Host, Origin, then the token), so
        a POST to `/mcp` runs no middleware at all; only the console's pages, which are not
        ours to wrap, are admitted by one. Any other path is admitted too before its 404."""
        middlewares = [self._admit_console] if self.console is not None else []
        app = web.Application(middlewares=middlewares, client_max_size=self.settings.body_cap)
        app.router.add_get("/health", self._health)
        if self.metrics is not None:
            app.router.add_get("/metrics", self._admitting(self._metrics))
        app.router.add_post("/mcp", self._post)
        app.router.add_get("/mcp", self._admitting(self._get))
        app.router.add_delete("/mcp", self._admitting(self._delete))
        app.router.add_post("/mcp/{face}", self._admitting(self._post))
        app.router.add_get("/mcp/{face}", self._admitting(self._get))
        app.router.add_delete("/mcp/{face}", self._admitting(self._delete))
        if self.console is not None:
            self.console.add_routes(app)
        anywhere = app.router.add_resource("/{anything:.*}")
        anywhere.add_route("*", self._elsewhere(app.router, anywhere))
        return app

    def hot(self, whole: AppHandler) -> AppHandler:
        """The handler a listener of this front alone runs first (`Listener`): `POST /mcp`
        goes straight to its route, which reads no match info, skipping the application
        and its router (about 215 bytecodes a request); anything else goes to `whole`, the
        application, as does a POST asking `Expect` (the application answers that first)."""
        post = self._post

        def serve(request: web.Request) -> Awaitable[web.StreamResponse]:
            if request.method == "POST" and request.path == "/mcp" and "Expect" not in request.headers:
                return post(request)
            return whole(request)

        return serve

    # -- admission --------------------------------------------------------------------

    def _admitting(self, serve: Callable[[web.Request, str], Awaitable[web.StreamResponse]]) -> Handler:
        """A route that admits its request first, then refuses a face not served here."""
        async def route(request: web.Request) -> web.StreamResponse:
            caller = admitted(request, self.rule, self.tokens, False, self.memo)
            if type(caller) is not str:
                return caller  # type: ignore[return-value]
            face = request.match_info.get("face")
            if face is not None and face != self.face.name:
                return _refuse(404, "Not Found: no such face")
            return await serve(request, caller)

        return route

    @web.middleware
    async def _admit_console(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """The console's pages: Host and Origin judged here; the page admits by its own cookie."""
        if is_console_path(request.path):
            caller = admitted(request, self.rule, self.tokens, True)
            if isinstance(caller, web.StreamResponse):
                return caller
        return await handler(request)  # type: ignore[no-any-return]

    async def _health(self, request: web.Request) -> web.StreamResponse:
        # Open at `/health`; a gateway's bot's own (`/bots/<id>/health`) asks for that bot's token.
        refused = admitted(request, self.rule, self.tokens, request.path == "/health")
        return refused if isinstance(refused, web.StreamResponse) else web.Response(text="ok\n")

    async def _metrics(self, request: web.Request, caller: str) -> web.StreamResponse:
        from sidecar.gate.observers.metrics import CONTENT_TYPE

        return web.Response(body=self.metrics.render(), headers={"Content-Type": CONTENT_TYPE})

    def _elsewhere(self, router: web.UrlDispatcher, anywhere: web.AbstractResource) -> Handler:
        """What no route of ours takes: admitted as its path would be (`/health` and the
        console's pages open), then aiohttp's own 405, naming the methods the path has, or
        its 404."""
        async def elsewhere(request: web.Request) -> web.StreamResponse:
            path = request.path
            open_path = path == "/health" or (self.console is not None and is_console_path(path))
            caller = admitted(request, self.rule, self.tokens, open_path)
            if isinstance(caller, web.StreamResponse):
                return caller
            allowed: set[str] = set()
            for resource in router.resources():
                if resource is not anywhere:
                    allowed |= (await resource.resolve(request))[1]
            if allowed:
                raise web.HTTPMethodNotAllowed(request.method, sorted(allowed))
            raise web.HTTPNotFound()

        return elsewhere

    # -- POST -------------------------------------------------------------------------

    async def _post(self, request: web.Request, caller: str | None = None) -> web.StreamResponse:
        """POST /mcp, admitted here when no `caller` is given (the one hot route: no
        wrapper, no middleware; `/mcp/<face>`'s wrapper admits and gives the caller)."""
        if caller is None:
            admitted_as = admitted(request, self.rule, self.tokens, False, self.memo)
            if type(admitted_as) is not str:
                return admitted_as  # type: ignore[return-value]
            caller = admitted_as
        if self.draining:
            return _refuse(503, "Service Unavailable: shutting down")
        self.posts += 1
        try:  # the admitted POST, here rather than in a coroutine of its own: every call passes
            headers = request.headers
            # The header as clients send it is taken as it is; anything else is parsed (parameters).
            if headers.get("Content-Type") != "application/json" and request.content_type != "application/json":
                return _refuse(415, "Unsupported Media Type: send application/json")
            cap = self.settings.body_cap
            body = body_at_hand(request, cap)  # most bodies came whole with their headers: no coroutine
            if body is None:
                try:
                    body = await read_body(request, cap, self.settings.body_seconds)
                except TooLarge:
                    return _refuse(413, f"Payload Too Large: at most {cap} bytes")
                except TimeoutError:
                    return _refuse(408, "Request Timeout: the body came too slowly")
            message = decode_engine_frame(body)  # the body's one decode: the message goes on typed
            if type(message) is FrameRejected:
                return _rpc_error(message.id, message.code, message.message, 400)
            if type(message) is Request:
                envelope = envelope_of(message)
                if envelope is not None:
                    return await self._stateless(request, message, envelope, caller)
            found = self._session_for(request, message, caller)  # type: ignore[arg-type]
            if isinstance(found, web.StreamResponse):
                return found
            if type(message) is not Request:
                found.dispatcher.take(message)
                return web.Response(status=202)
            return await self._serve(request, found, message)
        finally:
            self.posts -= 1

    def _session_for(self, request: web.Request, message: Request | Notification | Response,
                     caller: str) -> HttpSession | web.StreamResponse:
        version = request.headers.get("MCP-Protocol-Version")
        if version is not None and version not in HANDSHAKE_VERSIONS and version != MODERN_VERSION:
            return _refuse(400, f"Bad Request: unsupported MCP-Protocol-Version {version!r}")
        ident = request.headers.get(SESSION_HEADER)
        if ident is not None:
            session = self._owned(ident, caller)
            if session is None:
                return _rpc_error(None, SESSION_NOT_FOUND, "Session not found", 404)
            return session
        if isinstance(message, Request) and message.method == "initialize":
            created = self.table.create()
            if created is None:
                return _refuse(503, "Service Unavailable: too many sessions")
            created.owner = caller
            return created
        if version == MODERN_VERSION:
            return _rpc_error(getattr(message, "id", None), INVALID_PARAMS,
                              "params._meta must carry the 2026-07-28 request envelope", 400)
        return _refuse(400, f"Bad Request: {SESSION_HEADER} header is required")

    def _owned(self, ident: str, caller: str) -> HttpSession | None:
        """The session with this id, if the caller opened it; else None, as for no session."""
        session = self.table.sessions.get(ident)
        if session is None or session.owner != caller:
            return None
        return session

    async def _serve(self, request: web.Request, session: HttpSession, req: Request) -> web.StreamResponse:
        ident = req.id
        if session.busy_with(ident):
            return _rpc_error(ident, INVALID_REQUEST, f"id {ident!r} is already in use by a request in flight", 200)
        headers = {SESSION_HEADER: session.id} if req.method == "initialize" and session.id else None
        meta = req.params.get("_meta")  # most calls carry none: then no token
        exchange = session.begin_one(ident, progress_token(meta) if meta is not None else None)
        exchange.streaming = "text/event-stream" in request.headers.get("Accept", "")
        if headers is None:
            exchange.early = early_writer(request)
        session.dispatcher.take(req)
        try:
            return await answer_exchange(request, exchange, headers)
        finally:
            session.end(exchange)

    async def _stateless(self, request: web.Request, req: Request, envelope: dict[str, Any],
                         caller: str) -> web.StreamResponse:
        refusal = judge(req, envelope, request.headers)
        if refusal is not None:
            return _rpc_error(req.id, refusal.code, refusal.message, http_status(refusal.code), refusal.data)
        method = req.method
        if method == "server/discover":
            result = discover_result(server_capabilities(self.face))
            return json_answer(encode_result(req.id, result))
        if method == "subscriptions/listen":
            return await self._listen(request, Listen(self.face, req.id, req.params.get("notifications"), caller))
        caps = envelope.get(CAPABILITIES_KEY)
        if type(caps) is not dict:
            caps = {}
        if takes_rounds(req, caps):
            return await self._held_round(request, req, caps, caller)
        scope = self.scopes.get(caller)
        if scope is None:  # one a caller (callers are the tokens' identities: a few)
            scope = self.scopes[caller] = CallerScope(caller)
        session = self.table.transient()
        try:
            engine = session.engine  # everything a request brings is set anew: the session may be reused
            engine.client_capabilities = caps
            engine.protocol_version = MODERN_VERSION
            engine.held_scope = scope
            session.encode_answer = stamp_for(method)
            exchange = session.begin_one(req.id, progress_token(envelope) if PROGRESS_TOKEN in envelope else None)
            try:
                exchange.streaming = "text/event-stream" in request.headers.get("Accept", "")
                exchange.early = early_writer(request)
                session.dispatcher.take(req)
                return await answer_exchange(request, exchange, None, True)
            finally:
                session.end(exchange)
        finally:
            if not self.table.kept(session):  # the table holds it no longer than its request
                await session.close()

    async def _held_round(self, request: web.Request, req: Request, caps: dict[str, Any],
                          caller: str) -> web.StreamResponse:
        """A round of a call whose upstream may ask the engine something (sidecar.front.eras)."""
        token = request_progress_token(req.params)
        exchange = Exchange([req.id], [token])
        exchange.streaming = _accepts_events(request)
        this = Round(exchange, req.id, partial(stamp_answer, req.method), token)
        self.held.round(req, caller, caps, this)
        try:
            return await answer_exchange(request, exchange, None, stateless=True)
        finally:
            self.held.gone(this)
            exchange.discard()

    async def _listen(self, request: web.Request, listen: Listen) -> web.StreamResponse:
        """A 2026-07-28 subscription: change notifications until the engine or we end it."""
        self.listens.add(listen)
        try:
            await listen.start(self.resource_subscriptions)
            return await stream(request, listen.frames, listen.written)
        finally:
            self.listens.discard(listen)
            listen.close()
            listen.frames.discard()

    # -- GET and DELETE -----------------------------------------------------------------

    async def _get(self, request: web.Request, caller: str) -> web.StreamResponse:
        session = self._owned(request.headers.get(SESSION_HEADER, ""), caller)
        if session is None:
            status = 404 if SESSION_HEADER in request.headers else 400
            return _refuse(status, f"a known {SESSION_HEADER} header is required")
        if not _accepts_events(request):
            return _refuse(406, "Not Acceptable: the stream is text/event-stream")
        queue = session.open_stream()
        if queue is None:
            return _refuse(409, "Conflict: this session already has a stream open")
        try:
            return await stream_events(request, queue)
        finally:
            session.close_stream(queue)

    async def _delete(self, request: web.Request, caller: str) -> web.StreamResponse:
        ident = request.headers.get(SESSION_HEADER, "")
        if self._owned(ident, caller) is not None and await self.table.drop(ident):
            return web.Response(status=200)
        return _rpc_error(None, SESSION_NOT_FOUND, "Session not found", 404)

    # -- life -----------------------------------------------------------------------------

    async def expire_idle(self) -> None:
        """Close sessions idle past their time, for as long as the front runs."""
        period = max(0.05, min(self.settings.idle_seconds / 2, 30.0))
        while True:
            await asyncio.sleep(period)
            if await self.table.expire():
                log.info("idle HTTP sessions closed; %d remain", len(self.table.sessions))

    async def drain(self, why: str = "the sidecar was told to stop") -> None:
        """Refuse new work, let calls in flight finish (bounded); those still running then
        get the shutdown error (`why` names the cause), written out (bounded) before every
        session closes."""
        self.draining = True
        self.held.stop_all(why, waiting_only=True)  # their engines' next rounds would be refused now
        for listen in list(self.listens):
            listen.close()  # subscriptions end with their closing result; they are not work in flight
        if not await self._quiet(self.settings.drain_seconds):
            answered = self.table.answer_in_flight(why)
            log.warning("drain time over: %d calls still in flight were answered with the shutdown error", answered)
            await self._quiet(_LAST_WORDS_SECONDS)
        self.held.stop_all(why)
        await self.held.aclose()
        await self.table.close_all()

    async def _quiet(self, seconds: float) -> bool:
        """Wait until no POST is being served and no call is in flight; False past `seconds`."""
        try:
            async with asyncio.timeout(seconds):
                while self.posts or self.table.in_flight():
                    await asyncio.sleep(0.05)
        except TimeoutError:
            return False
        return True


def _accepts_events(request: web.Request) -> bool:
    return "text/event-stream" in request.headers.get("Accept", "")
