"""The Streamable HTTP front: MCP at `/mcp` (and `/mcp/<face>`), one engine session
per `Mcp-Session-Id`, and the stateless 2026-07-28 requests beside them.

Owns the routes and the order of admission: Host, then Origin (403), then the bearer
token (401), then the body cap (413, judged before buffering) and its read timeout.
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
import weakref
from collections.abc import Callable
from typing import Any

from aiohttp import web

from sidecar.errors import INVALID_PARAMS, INVALID_REQUEST
from sidecar.front.eras.held import Round
from sidecar.front.eras.listen_resources import ResourceSubscriptions
from sidecar.front.eras.rounds import HeldCalls, takes_rounds
from sidecar.front.http.admission import OPEN, HostRule, Refusal, admit
from sidecar.front.http.console_door import ConsoleSite, is_console_path
from sidecar.front.http.listener import FrontSettings
from sidecar.front.http.sessions import Exchange, HttpSession, SessionTable
from sidecar.front.http.stateless import (
    Listen,
    answer_status,
    discover_result,
    envelope_of,
    http_status,
    judge,
    stamp_answer,
)
from sidecar.front.methods import server_capabilities
from sidecar.gate.budget.held import CallerScope
from sidecar.hub.face import Face
from sidecar.redact import Redactor
from sidecar.wire import (
    Answer,
    FrameRejected,
    Notification,
    Request,
    Response,
    decode_engine_frame,
    encode_error,
)
from sidecar.wire.outbox import FrameQueue
from sidecar.wire.requests import request_progress_token
from sidecar.wire.versions import HANDSHAKE_VERSIONS, MODERN_VERSION

__all__ = ["HttpFront"]

log = logging.getLogger(__name__)

SESSION_HEADER = "Mcp-Session-Id"
SESSION_NOT_FOUND = -32001
# The request's key for its caller identity: typed where aiohttp has request keys (3.14+;
# a plain string key there draws a NotAppKeyWarning), a string before.
CALLER = web.RequestKey("omb.caller", str) if hasattr(web, "RequestKey") else "omb.caller"
PING_SECONDS = 15.0
_LAST_WORDS_SECONDS = 2.0  # the shutdown errors' time to be written, at most
_SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def _rpc_error(ident: Any, code: int, message: str, status: int, data: Any = None,
               headers: dict[str, str] | None = None) -> web.Response:
    body = encode_error(ident, code, message, data)
    return web.Response(body=body, status=status, content_type="application/json", headers=headers)


def _refuse(status: int, words: str, headers: dict[str, str] | None = None) -> web.Response:
    return _rpc_error(None, INVALID_REQUEST, words, status, headers=headers)


def admitted(request: web.Request, rule: HostRule, tokens: tuple[str, ...], open_path: bool) -> str | web.Response:
    """`admission.admit` on an aiohttp request: the caller (or `OPEN`), else the refusal."""
    headers = request.headers
    caller = admit(rule, tokens, headers.get("Host"), headers.get("Origin"), headers.get("Authorization"), open_path)
    if isinstance(caller, Refusal):
        return _refuse(caller.status, caller.words, dict(caller.headers) if caller.headers else None)
    return caller


def _event(frame: bytes) -> bytes:
    return b"event: message\ndata: " + frame.rstrip(b"\n") + b"\n\n"


class HttpFront:
    def __init__(self, face: Face, redactor: Redactor, settings: FrontSettings,
                 console: ConsoleSite | None = None, metrics: Any = None) -> None:
        self.face = face
        self.console = console  # the operator's page, when `console.enabled` (it admits by its own cookie)
        self.settings = settings
        self.rule = HostRule(settings.host, settings.allowed_hosts)
        self.table = SessionTable(face, redactor, settings.max_sessions, settings.idle_seconds)
        self.held = HeldCalls(face, redactor)  # stateless calls whose upstream asked (sidecar.front.eras)
        self.draining = False
        self.posts = 0  # POSTs being served right now, for the drain
        self.listens: set[Listen] = set()
        self.resource_subscriptions = ResourceSubscriptions(face)  # held upstream for the listens' resources
        self.owners: weakref.WeakKeyDictionary[HttpSession, str] = weakref.WeakKeyDictionary()
        self.metrics: Any = metrics  # a FrontMetrics when metrics are on (sidecar.gate.observers.metrics)

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._admit], client_max_size=self.settings.body_cap)
        app.router.add_get("/health", self._health)
        if self.metrics is not None:
            app.router.add_get("/metrics", self._metrics)
        for path in ("/mcp", "/mcp/{face}"):
            app.router.add_post(path, self._post)
            app.router.add_get(path, self._get)
            app.router.add_delete(path, self._delete)
        if self.console is not None:
            self.console.add_routes(app)
        return app

    # -- admission --------------------------------------------------------------------

    @web.middleware
    async def _admit(self, request: web.Request, handler: Any) -> web.StreamResponse:
        open_path = request.path == "/health" or (self.console is not None and is_console_path(request.path))
        caller = admitted(request, self.rule, self.settings.tokens, open_path)
        if isinstance(caller, web.Response):
            return caller
        if caller == OPEN:
            return await handler(request)  # type: ignore[no-any-return]
        request[CALLER] = caller
        face = request.match_info.get("face")
        if face is not None and face != self.face.name:
            return _refuse(404, "Not Found: no such face")
        return await handler(request)  # type: ignore[no-any-return]

    async def _health(self, request: web.Request) -> web.Response:
        return web.Response(text="ok\n")

    async def _metrics(self, request: web.Request) -> web.Response:
        from sidecar.gate.observers.metrics import CONTENT_TYPE

        return web.Response(body=self.metrics.render(), headers={"Content-Type": CONTENT_TYPE})

    async def _read_body(self, request: web.Request) -> bytes | web.Response:
        cap = self.settings.body_cap
        if request.content_length is not None and request.content_length > cap:
            return _refuse(413, f"Payload Too Large: at most {cap} bytes")
        content = request.content
        if content.is_eof() and content.total_bytes <= cap:  # all of it came with the headers: no wait, no timer
            return content.read_nowait()
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.settings.body_seconds):
                while chunk := await request.content.read(65536):
                    size += len(chunk)
                    if size > cap:
                        return _refuse(413, f"Payload Too Large: at most {cap} bytes")
                    chunks.append(chunk)
        except TimeoutError:
            return _refuse(408, "Request Timeout: the body came too slowly")
        return b"".join(chunks)

    # -- POST -------------------------------------------------------------------------

    async def _post(self, request: web.Request) -> web.StreamResponse:
        if self.draining:
            return _refuse(503, "Service Unavailable: shutting down")
        self.posts += 1
        try:
            return await self._post_admitted(request)
        finally:
            self.posts -= 1

    async def _post_admitted(self, request: web.Request) -> web.StreamResponse:
        if request.content_type != "application/json":
            return _refuse(415, "Unsupported Media Type: send application/json")
        body = await self._read_body(request)
        if isinstance(body, web.Response):
            return body
        message = decode_engine_frame(body)  # the body's one decode: the message goes on typed
        if isinstance(message, FrameRejected):
            return _rpc_error(message.id, message.code, message.message, 400)
        if isinstance(message, Request):
            envelope = envelope_of(message)
            if envelope is not None:
                return await self._stateless(request, message, envelope)
        found = self._session_for(request, message)
        if isinstance(found, web.Response):
            return found
        if not isinstance(message, Request):
            found.dispatcher.take(message)
            return web.Response(status=202)
        return await self._serve(request, found, message)

    def _session_for(self, request: web.Request, message: Request | Notification | Response) -> HttpSession | web.Response:
        version = request.headers.get("MCP-Protocol-Version")
        if version is not None and version not in HANDSHAKE_VERSIONS and version != MODERN_VERSION:
            return _refuse(400, f"Bad Request: unsupported MCP-Protocol-Version {version!r}")
        ident = request.headers.get(SESSION_HEADER)
        if ident is not None:
            session = self._owned(request, ident)
            if session is None:
                return _rpc_error(None, SESSION_NOT_FOUND, "Session not found", 404)
            return session
        if isinstance(message, Request) and message.method == "initialize":
            created = self.table.create()
            if created is None:
                return _refuse(503, "Service Unavailable: too many sessions")
            self.owners[created] = request[CALLER]
            return created
        if version == MODERN_VERSION:
            return _rpc_error(getattr(message, "id", None), INVALID_PARAMS,
                              "params._meta must carry the 2026-07-28 request envelope", 400)
        return _refuse(400, f"Bad Request: {SESSION_HEADER} header is required")

    def _owned(self, request: web.Request, ident: str) -> HttpSession | None:
        """The session with this id, if the caller opened it; else None, as for no session."""
        session = self.table.get(ident)
        if session is None or self.owners.get(session) != request[CALLER]:
            return None
        return session

    async def _serve(self, request: web.Request, session: HttpSession, req: Request) -> web.StreamResponse:
        if session.busy_with(req.id):
            return _rpc_error(req.id, INVALID_REQUEST, f"id {req.id!r} is already in use by a request in flight", 200)
        headers = {SESSION_HEADER: session.id} if req.method == "initialize" and session.id else {}
        exchange = session.begin([req.id], [_progress_token(req)])
        exchange.streaming = _accepts_events(request)
        session.dispatcher.take(req)
        try:
            return await self._answer(request, exchange, headers)
        finally:
            session.end(exchange)

    async def _stateless(self, request: web.Request, req: Request, envelope: dict[str, Any]) -> web.StreamResponse:
        refusal = judge(req, envelope, request.headers)
        if refusal is not None:
            return _rpc_error(req.id, refusal.code, refusal.message, http_status(refusal.code), refusal.data)
        if req.method == "server/discover":
            result = discover_result(server_capabilities(self.face))
            return web.json_response({"jsonrpc": "2.0", "id": req.id, "result": result})
        if req.method == "subscriptions/listen":
            return await self._listen(request, Listen(self.face, req.id, req.params.get("notifications"), request[CALLER]))
        caps = envelope.get("io.modelcontextprotocol/clientCapabilities")
        if takes_rounds(req, caps if isinstance(caps, dict) else {}):
            return await self._held_round(request, req, caps if isinstance(caps, dict) else {})
        session = self.table.transient()
        try:
            session.engine.client_capabilities = caps if isinstance(caps, dict) else {}
            session.engine.protocol_version = MODERN_VERSION
            session.engine.held_scope = CallerScope(request[CALLER])
            session.encode_answer = _stamper(req.method)
            exchange = session.begin([req.id], [_progress_token(req)])
            try:
                exchange.streaming = _accepts_events(request)
                session.dispatcher.take(req)
                return await self._answer(request, exchange, {}, stateless=True)
            finally:
                session.end(exchange)
        finally:
            await self.table.passed(session)  # the table holds it no longer than its request

    async def _held_round(self, request: web.Request, req: Request, caps: dict[str, Any]) -> web.StreamResponse:
        """A round of a call whose upstream may ask the engine something (sidecar.front.eras)."""
        token = _progress_token(req)
        exchange = Exchange([req.id], [token])
        exchange.streaming = _accepts_events(request)
        this = Round(exchange, req.id, _stamper(req.method), token)
        self.held.round(req, request[CALLER], caps, this)
        try:
            return await self._answer(request, exchange, {}, stateless=True)
        finally:
            self.held.gone(this)
            exchange.frames.discard()

    async def _answer(self, request: web.Request, exchange: Exchange, headers: dict[str, str],
                      stateless: bool = False) -> web.StreamResponse:
        """JSON when the answer comes first and alone; else an event stream of everything.
        A stateless JSON error answer's status follows its code."""
        first = await exchange.frames.get()
        # Alone means only the end marker is left: frames put while this handler waited to
        # run (a held round's progress, then its question's answer) are all streamed.
        if first is not None and not exchange.waiting and len(exchange.frames) == 1:
            status = answer_status(exchange.error_code) if stateless else 200
            return web.Response(body=first, status=status, content_type="application/json", headers=headers)
        response = web.StreamResponse(status=200, headers={**_SSE_HEADERS, **headers})
        await response.prepare(request)
        frame = first
        while frame is not None:
            await response.write(_event(frame))
            frame = await _next_or_ping(exchange.frames, response)
        await response.write_eof()
        return response

    async def _listen(self, request: web.Request, listen: Listen) -> web.StreamResponse:
        """A 2026-07-28 subscription: change notifications until the engine or we end it."""
        self.listens.add(listen)
        try:
            await listen.start(self.resource_subscriptions)
            response = web.StreamResponse(status=200, headers=_SSE_HEADERS)
            await response.prepare(request)
            while (frame := await _next_or_ping(listen.frames, response)) is not None:
                listen.written(frame)
                await response.write(_event(frame))
            await response.write_eof()
            return response
        finally:
            self.listens.discard(listen)
            listen.close()
            listen.frames.discard()

    # -- GET and DELETE -----------------------------------------------------------------

    async def _get(self, request: web.Request) -> web.StreamResponse:
        session = self._owned(request, request.headers.get(SESSION_HEADER, ""))
        if session is None:
            status = 404 if SESSION_HEADER in request.headers else 400
            return _refuse(status, f"a known {SESSION_HEADER} header is required")
        if not _accepts_events(request):
            return _refuse(406, "Not Acceptable: the stream is text/event-stream")
        stream = session.open_stream()
        if stream is None:
            return _refuse(409, "Conflict: this session already has a stream open")
        try:
            response = web.StreamResponse(status=200, headers=_SSE_HEADERS)
            await response.prepare(request)
            while (frame := await _next_or_ping(stream, response)) not in (None, b""):
                assert frame is not None
                await response.write(_event(frame))
            return response
        finally:
            session.close_stream(stream)

    async def _delete(self, request: web.Request) -> web.StreamResponse:
        ident = request.headers.get(SESSION_HEADER, "")
        if self._owned(request, ident) is not None and await self.table.drop(ident):
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


async def _next_or_ping(queue: FrameQueue, response: web.StreamResponse) -> bytes | None:
    """The next frame; while none comes, a comment now and then keeps proxies and us honest."""
    while True:
        try:
            return await asyncio.wait_for(queue.get(), PING_SECONDS)
        except TimeoutError:
            await response.write(b": ping\n\n")


def _stamper(method: str) -> Callable[[Answer], bytes]:
    """How a stateless request's answer is written: with this revision's fields spliced in."""
    return lambda answer: stamp_answer(method, answer)


def _accepts_events(request: web.Request) -> bool:
    return "text/event-stream" in request.headers.get("Accept", "")


def _progress_token(req: Request) -> object:
    return request_progress_token(req.params)
