"""The dispatcher: turns each frame from the engine into exactly one answer (or none, for
notifications and cancelled requests), by the method table it is given.

Owns the session's side of a request's life: ids already in flight are refused, an unknown
method is -32601, a handler's `SidecarError` becomes its code and words, and any unexpected
exception becomes -32603 naming the method and the kind of fault (a missing module names
its package and how to install it; the traceback goes to the log at DEBUG only, redacted),
and the process keeps serving. Each request's params are typed here, once, before its
handler runs (`sidecar.wire.requests`): params that do not fit the method's struct are
answered -32602 naming the field, and the handler never sees them. Also owns forwarding a
request to one upstream with its cancellation and progress attached (the engine's progress
token comes from the typed params). The methods themselves are `sidecar.front.methods`.
Each request runs as a task (`spawn`), except one a method's starter takes when the
session's owner can hold work with no task (`hold`: `Jobs.hold`, or, `finds_held`, an
owner that finds that work through `held`, as stdio's `Jobs` does: nothing is handed to it
per call): a plain `tools/call` is sent upstream in the reader's callback and answered
from its answer's done callback, through the same `answer`/`fail` as every other request.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

import msgspec

from sidecar.errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    CallCancelled,
    SidecarError,
)
from sidecar.features import missing_module_words
from sidecar.front.eras.asking import engine_asker
from sidecar.front.handling import Handler, MethodTable, PlainStarter, Result, Starter
from sidecar.front.methods import METHODS, PLAIN_CALL, STARTERS
from sidecar.gate.answer import error_body
from sidecar.gate.inline import Started
from sidecar.gate.route import ASKS, scrub_answer
from sidecar.concurrency import Held
from sidecar.hub.face import Face
from sidecar.hub.session import EngineSession
from sidecar.redact import Redactor
from sidecar.upstream import Upstream
from sidecar.wire.requests import PROGRESS_TOKEN, CallParams, CancelledParams, Params, params_of
from sidecar.wire.versions import MODERN_VERSION, without_envelope
from sidecar.wire import (
    Answer,
    EngineMessage,
    ErrorAnswer,
    FrameRejected,
    Notification,
    Request,
    RequestId,
    Response,
    decode_engine_frame,
)

__all__ = ["Dispatcher", "Handler", "MethodTable", "Result", "unexpected_fault"]

log = logging.getLogger(__name__)

_EMPTY = b"{}"


def unexpected_fault(method: str, exc: Exception) -> str:
    """The words for an exception no handler expected; its traceback only at DEBUG."""
    log.warning("%s failed: %s", method, type(exc).__name__)
    log.debug("%s failed with this traceback", method, exc_info=exc)
    if isinstance(exc, ModuleNotFoundError):
        return missing_module_words(method, exc.name)
    return f"{method} failed: an unexpected {type(exc).__name__} inside the sidecar (its log has more at DEBUG)"


class Dispatcher:
    """Reads engine frames for one session and answers each request exactly once."""

    def __init__(
        self,
        face: Face,
        session: EngineSession,
        spawn: Callable[[Coroutine[Any, Any, None]], None],
        redactor: Redactor | None = None,
        methods: MethodTable | None = None,
        hold: Callable[[asyncio.Future[Any] | Held], None] | None = None,
        finds_held: bool = False,
    ) -> None:
        if methods is None:  # the MCP methods of this revision, unless a caller brings its own
            methods = METHODS
        self.methods = methods
        # Who owns work started with no task (`Jobs.hold`); without one, every request gets
        # a task. The starters are the default table's (a caller's own table has none).
        # `finds_held`: the owner asks `held` instead of being handed each (`Jobs.hold_from`).
        self.hold = None if finds_held else hold
        holds = hold is not None or finds_held
        self.starters: Mapping[str, Starter] = STARTERS if holds and methods is METHODS else {}
        # `tools/call`'s starter for params that are a name and arguments alone, read raw
        # (`_request`); None when calls take tasks (the starters' rule), or a face traces
        # its calls (set when the face is made: each call is then wrapped in its span).
        self.plain_call: PlainStarter | None = PLAIN_CALL if self.starters and face.tracer is None else None
        self.face = face
        self.session = session
        self.spawn = spawn
        self.redact = Redactor() if redactor is None else redactor  # one with no secrets is falsy: kept, not rebuilt
        # How a server's questions reach this engine: it holds no call's state, so one per
        # session serves every call (not a closure built per call).
        self.ask_engine = engine_asker(session, face.config.policy.confirm_seconds)

    # -- work under way with no task (`sidecar.concurrency.HeldSource`) ------------

    def held(self) -> list[Held]:
        """The plain calls under way with no task, found through their connections'
        tables by where each went (`in_flight`; a call the engine gave up on, or one
        answered, is no longer there)."""
        found: list[Held] = []
        for sent in self.session.in_flight.values():
            if sent is not None:
                waiter = sent[0].waiter(sent[1])
                if type(waiter) is Started:
                    found.append(waiter)
        return found

    def stop_holding(self) -> None:
        """From now on every request takes a task (the owner closed: it closes them unstarted)."""
        self.starters = {}
        self.plain_call = None

    # -- frames in ----------------------------------------------------------------

    def feed(self, line: bytes) -> None:
        """One frame's bytes, decoded here (the one decode of an engine frame)."""
        message = decode_engine_frame(line)
        if type(message) is Request:  # the most frequent frame, dispatched without `take`'s call
            self._request(message)
        else:
            self.take(message)

    def take(self, message: EngineMessage | FrameRejected) -> None:
        """One frame a front decoded already (HTTP reads the body before routing it)."""
        if type(message) is Request:
            self._request(message)
        elif type(message) is Notification:
            self._notification(message)
        elif type(message) is Response:
            self._engine_answer(message)
        else:
            assert isinstance(message, FrameRejected)
            self.session.emit(ErrorAnswer(message.id, message.code, message.message))

    def _request(self, req: Request) -> None:
        session, method, ident = self.session, req.method, req.id
        in_flight = session.in_flight
        if method == "ping":
            session.emit(Answer(ident, _EMPTY))
            return
        if ident in in_flight:
            session.emit(ErrorAnswer(ident, INVALID_REQUEST, f"id {ident!r} is already in use by a request in flight"))
            return
        raw = req.params
        if method == "tools/call" and self.plain_call is not None:
            # The common call, a name and arguments (and from a 2026-07-28 engine its `_meta`)
            # and nothing else, read from the params as they came: what `params_of` would
            # make of them, with no struct made unless the call takes a task.
            name, arguments, size = raw.get("name"), raw.get("arguments"), len(raw)
            if type(name) is str and type(arguments) is dict:
                meta = None if size == 2 else raw.get("_meta")
                if size == 2 or size == 3 and type(meta) is dict:
                    if self.plain_call(self, req, name, arguments, meta):  # under way with no task (it set in_flight)
                        return
                    in_flight[ident] = None
                    self.spawn(self._serve(self.methods[method], req, CallParams(name=name, arguments=arguments, meta=meta)))
                    return
        handler = self.methods.get(method)
        if handler is None:
            session.emit(ErrorAnswer(ident, METHOD_NOT_FOUND, f"method not found: {method}"))
            return
        try:
            params = params_of(method, req.params)
        except SidecarError as exc:
            session.emit(ErrorAnswer(ident, exc.code, exc.message))
            return
        tracer = self.face.tracer
        if tracer is not None:
            handler = tracer.wrap(handler)
        else:
            starter = self.starters.get(method)
            if starter is not None and starter(self, req, params):  # under way with no task (it set in_flight)
                return
        in_flight[ident] = None
        self.spawn(self._serve(handler, req, params))

    async def _serve(self, handler: Handler, req: Request, params: Params) -> None:
        try:
            result = await handler(self, req, params)
        except Exception as exc:
            self.fail(req, exc)
            return
        self.answer(req, result)

    async def serve(self, req: Request, result: Awaitable[Result]) -> None:
        """Answer `req` with what `result` brings (run as a task: `spawn(serve(...))`)."""
        try:
            answer = await result
        except Exception as exc:
            self.fail(req, exc)
            return
        self.answer(req, answer)

    def answer(self, req: Request, result: Result) -> None:
        """`req`'s one answer, unless it was cancelled or answered already."""
        session = self.session
        if session.in_flight.pop(req.id, False) is not False:
            session.emit(Answer(req.id, result))
            if req.method == "initialize":
                session.announced = True

    def fail(self, req: Request, exc: Exception) -> None:
        """`req`'s one answer, an error: a `SidecarError` its code and words (an upstream's
        own error object as it came), anything else -32603 naming the method."""
        if isinstance(exc, CallCancelled):  # the engine gave up on it: no answer
            return
        if isinstance(exc, SidecarError):
            answer = ErrorAnswer(req.id, exc.code, self.redact(exc.message),
                                 raw=msgspec.Raw(error_body(exc, self.redact)))
        else:
            answer = ErrorAnswer(req.id, INTERNAL_ERROR, self.redact(unexpected_fault(req.method, exc)))
        if self.session.in_flight.pop(req.id, False) is not False:
            self.session.emit(answer)

    def _notification(self, note: Notification) -> None:
        if note.method == "notifications/cancelled":
            try:
                cancelled = params_of(note.method, note.params)
            except SidecarError:
                return  # a notification gets no answer: one the sidecar cannot read changes nothing
            assert type(cancelled) is CancelledParams
            if cancelled.requestId is not None:
                self.session.cancel(cancelled.requestId)
        elif note.method == "notifications/roots/list_changed":
            for upstream in self.face.pool.ready():
                upstream.ready_connection().notify(note.method)

    def _engine_answer(self, answer: Response) -> None:
        waiting = self.session.relayed.release(answer.id)
        if waiting is None:
            return
        conn, upstream_id = waiting
        if answer.error is not None:
            code = answer.error.get("code")
            message = answer.error.get("message")
            conn.respond_error(upstream_id, code if type(code) is int else INTERNAL_ERROR,
                               message if isinstance(message, str) else "the client reported an error")
        else:
            conn.respond(upstream_id, answer.result if answer.result is not None else {})

    # -- relaying -----------------------------------------------------------------

    def progress_sink(self, req: Request, params: Params) -> Callable[[dict[str, Any]], None] | None:
        """Relays an upstream's progress to the engine while `req` is in flight; None when
        the request carries no progress token (nothing is built then)."""
        token = params.progress
        if token is None:
            return None
        return _Progress(self.session, req.id, token, self.face.gate.answers).relay

    def mark_sent(self, req: Request) -> Callable[[Any, int], None]:
        """Records where `req` went (connection, upstream id), so a cancellation follows it."""
        return _Sent(self.session.in_flight, req.id).sent

    async def forward(self, req: Request, params: Params, upstream: Upstream,
                      body: dict[str, Any] | None = None) -> msgspec.Raw:
        """Send `req` to one upstream under a fresh id, with `body` for params (the
        request's own when None); cancellation and progress follow it; configured secrets
        are redacted from the answer."""
        sent = _without_envelope(req.params if body is None else body)
        relay = self._relay(req, upstream)
        if relay is not None:  # a 2026-07-28 engine and server: their rounds pass through (sidecar.front.eras)
            sent = relay.params(sent, *relay.round)
        conn = upstream.ready_connection()
        if self.face.tracer is not None:  # a client span, its context in the _meta sent on
            def send(traced: dict[str, Any]) -> Awaitable[msgspec.Raw]:
                return conn.request(req.method, traced, self.progress_sink(req, params), self.mark_sent(req))

            answer: msgspec.Raw = await self.face.tracer.forward(send, sent or {}, upstream.config, req.method)
        else:
            answer = await conn.request(req.method, sent or None, self.progress_sink(req, params), self.mark_sent(req))
        scrub = self.face.gate.answers
        if ASKS.search(answer) is not None:  # a 2026-07-28 server's questions (sidecar.gate.asked)
            answer = await self._answer_questions(req, params, upstream, sent, answer, relay)
        return scrub_answer(answer, scrub) if scrub else answer

    def _relay(self, req: Request, upstream: Upstream) -> Any:
        """The relay of a 2026-07-28 engine's prompt or resource read from a 2026-07-28
        server (with the round it brings back as `round`), else None."""
        if req.method not in ("prompts/get", "resources/read") or upstream.info is None \
                or upstream.info.protocol_version != MODERN_VERSION:
            return None
        from sidecar.front.confirming import caller_of
        from sidecar.front.eras.relayed import relayed_round

        relay, claim, answers = relayed_round(self.face, self.session, caller_of(self.session), req.params, req.method)
        if relay is not None:
            relay.round = (claim, answers)
        return relay

    async def _answer_questions(self, req: Request, params: Params, upstream: Upstream, body: dict[str, Any],
                                answer: msgspec.Raw, relay: Any = None) -> msgspec.Raw:
        from sidecar.gate.asked import answer_rounds

        conn = upstream.ready_connection()

        def send(again: dict[str, Any]) -> Awaitable[msgspec.Raw]:
            return conn.request(req.method, again, self.progress_sink(req, params), self.mark_sent(req))

        ask = self.ask_engine
        wrap = (lambda asked: relay.wrap(asked, False)) if relay is not None else None
        return await answer_rounds(answer, body, send, ask, upstream.alias, self.face.gate.answers, tool=False,
                                   relay=wrap)


def _without_envelope(params: dict[str, Any]) -> dict[str, Any]:
    """The params an upstream gets: the engine's 2026-07-28 envelope stays here."""
    meta = params.get("_meta")
    if not isinstance(meta, dict) or without_envelope(meta) is meta:
        return params
    rest = without_envelope(meta)
    return {**{k: v for k, v in params.items() if k != "_meta"}, **({"_meta": rest} if rest else {})}


class _Sent(msgspec.Struct):
    """Where one request went upstream, written into its session's in-flight table while
    the request is still there (a bound method, not a closure, per request; a struct: no
    Python `__init__`)."""

    in_flight: dict[RequestId, Any]
    ident: RequestId

    def sent(self, conn: Any, upstream_id: int) -> None:
        if self.ident in self.in_flight:
            self.in_flight[self.ident] = (conn, upstream_id)


class _Progress:
    """One request's progress relay: an upstream's progress goes to the engine under the
    engine's token, secrets scrubbed, while the request is in flight."""

    __slots__ = ("session", "ident", "token", "scrub")

    def __init__(self, session: EngineSession, ident: RequestId, token: int | str, scrub: Any) -> None:
        self.session = session
        self.ident = ident
        self.token = token
        self.scrub = scrub

    def relay(self, params: dict[str, Any]) -> None:
        if self.ident in self.session.in_flight:
            scrub = self.scrub
            self.session.notify("notifications/progress", {**(scrub.clean(params) if scrub else params),
                                                           PROGRESS_TOKEN: self.token})
