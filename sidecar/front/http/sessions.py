"""HTTP engine sessions: the same EngineSession and Dispatcher the stdio front uses,
with each event they send routed to the HTTP exchange that waits for it, by the event's
kind, id and progress token (nothing the sidecar produced is decoded again), and
encoded as it goes in.

Owns: the session table (a cap, idle expiry, ids with 192 random bits), and for each
session its exchanges (one per POST carrying requests), its GET stream and the frames
waiting for one. An answer goes to the POST that asked; progress goes to the POST whose
request carries its token; requests and log messages from upstreams go to the newest
POST still streaming, else to the GET stream; everything else goes to the GET stream.
Refuses an engine id already waiting in the same session (answered by the dispatcher
rules, in that POST), and a new session past the cap.

A stateless (2026-07-28) request gets a transient session: unlisted, no id, and kept for
the next stateless request when its own left nothing in it (at most `IDLE_TRANSIENTS`).

A session that ends (DELETE, or idle expiry) gives back the resource subscriptions it
held upstream that no other session or listen stream still asks for; at shutdown the
upstreams go too, so nothing is sent.

Every stream is a `FrameQueue` bounded in bytes: a client that opens a GET stream or an
event-stream answer and never reads it gets its notifications dropped (counted) once the
stream holds too much, and an upstream's request relayed to it refused; answers always
go in (each is owed to a request the client sent). A GET stream not open yet keeps less.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable, Iterable

from sidecar.concurrency import Jobs
from sidecar.errors import SidecarError
from sidecar.front.dispatcher import Dispatcher
from sidecar.front.eras.listen_resources import watched_on_stateless
from sidecar.front.http.exchange import Exchange
from sidecar.front.shutdown import answer_in_flight
from sidecar.hub.face import Face
from sidecar.hub.notices import subscribers
from sidecar.hub.session import EngineSession
from sidecar.redact import Redactor
from sidecar.wire import Answer, ErrorAnswer, Event, Notice, RequestId, encode_event
from sidecar.wire.outbox import IDLE_HARD_BYTES, FrameQueue, Shedding

__all__ = ["Exchange", "HttpSession", "SessionTable", "new_session_id"]

log = logging.getLogger(__name__)

UNSUBSCRIBE_SECONDS = 5.0  # each resource a closed session leaves behind, at most
IDLE_TRANSIENTS = 16  # stateless requests' sessions kept for reuse, at most


def new_session_id() -> str:
    return secrets.token_urlsafe(24)


class HttpSession:
    """One engine over HTTP: its dispatcher, its exchanges and its GET stream."""

    def __init__(self, face: Face, redactor: Redactor, ident: str | None = None) -> None:
        self.id = ident
        self.owner: str | None = None  # the caller identity that opened it (a listed session)
        self.face = face
        self.engine = EngineSession(emit=self.deliver, admit=self.admits)
        # How an answer is written; the 2026-07-28 revision splices its fields in here.
        self.encode_answer: Callable[[Answer], bytes] = encode_event
        self.jobs = Jobs()
        # `hold`: a plain `tools/call` goes upstream with no task of its own and is answered
        # from its answer's done callback (`Gate.start`), as on stdio.
        self.dispatcher = Dispatcher(face, self.engine, self.jobs.spawn, redactor, hold=self.jobs.hold)
        self.last_seen = time.monotonic()
        # The GET stream's frames; they wait here, fewer, while no GET stream is open.
        self._stream: FrameQueue | None = None  # made when first needed (a stateless request seldom does)
        self.stream_open = False
        self._by_id: dict[RequestId, Exchange] = {}
        self._by_token: dict[object, Exchange] = {}
        self._open: list[Exchange] = []

    @property
    def stream(self) -> FrameQueue:
        if self._stream is None:
            self._stream = FrameQueue(Shedding("an HTTP client's GET stream"))
        return self._stream

    # -- engine frames in ---------------------------------------------------------------

    def busy_with(self, ident: RequestId) -> bool:
        return ident in self._by_id

    def begin_one(self, ident: RequestId, token: object) -> Exchange:
        """`begin` for a POST of one request (most of them)."""
        self.last_seen = time.monotonic()
        exchange = Exchange((ident,), () if token is None else (token,))
        self._by_id[ident] = exchange
        if token is not None:
            self._by_token[token] = exchange
        self._open.append(exchange)
        return exchange

    def begin(self, ids: list[RequestId], tokens: list[object]) -> Exchange:
        self.last_seen = time.monotonic()
        exchange = Exchange(ids, tokens)
        for ident in ids:
            self._by_id[ident] = exchange
        for token in exchange.tokens:
            self._by_token[token] = exchange
        self._open.append(exchange)
        return exchange

    def end(self, exchange: Exchange) -> None:
        """The POST is over (answered, or its client went away)."""
        self.last_seen = time.monotonic()
        if exchange in self._open:
            self._open.remove(exchange)
        if exchange.waiting:  # its client hung up before the answer
            for ident in list(exchange.waiting):
                if self._by_id.get(ident) is exchange:
                    del self._by_id[ident]
                    self.engine.cancel(ident)  # a client that hung up gets no answer: stop the work
        for token in exchange.tokens:
            if self._by_token.get(token) is exchange:
                del self._by_token[token]
        exchange.discard()  # what its client did not stay for

    # -- sidecar frames out -------------------------------------------------------------

    def deliver(self, event: Event) -> None:
        """Route one event: an answer to the POST that asked, progress to the POST whose
        request carries its token, relayed requests and log messages to the newest POST
        still streaming, the rest to the GET stream."""
        if type(event) is Answer or type(event) is ErrorAnswer:
            self._answer(event)
        elif type(event) is Notice:
            method = event.method
            if method == "notifications/progress":
                exchange = self._by_token.get(event.progress_token) or self._newest()
            else:
                exchange = self._newest() if method == "notifications/message" else None
            self._to(exchange, encode_event(event), method)
        else:
            self._to(self._newest(), encode_event(event), None)

    def admits(self, method: str | None) -> bool:
        """May a frame of `method` go now? Notifications are judged where they land (see
        `deliver`); a request is judged here, where a refusal can still be answered."""
        if method is not None:
            return True
        queue, hard = self._queue_for(self._newest())
        return queue.admits(None, hard)

    def _answer(self, event: Answer | ErrorAnswer) -> None:
        ident = event.id
        exchange = self._by_id.pop(ident, None) if ident is not None else None
        if exchange is None or ident is None:
            self.stream.put(encode_event(event))
        elif type(event) is ErrorAnswer:
            exchange.answer(encode_event(event), ident, event.code)
        else:
            exchange.answer(self.encode_answer(event), ident)  # type: ignore[arg-type]

    def _newest(self) -> Exchange | None:
        return next((e for e in reversed(self._open) if e.streaming and e.waiting), None)

    def _queue_for(self, exchange: Exchange | None) -> tuple[FrameQueue, int | None]:
        if exchange is not None and exchange.streaming:
            return exchange.frames, None
        return self.stream, None if self.stream_open else IDLE_HARD_BYTES

    def _to(self, exchange: Exchange | None, frame: bytes, method: str | None) -> None:
        """A notification (its method) or a relayed request (None, admitted already)."""
        queue, hard = self._queue_for(exchange)
        if method is None:
            queue.put(frame)
        else:
            queue.offer(frame, method, hard)

    # -- the GET stream -----------------------------------------------------------------

    def open_stream(self) -> FrameQueue | None:
        if self.stream_open:
            return None
        self.stream_open = True
        return self.stream

    def close_stream(self, stream: FrameQueue) -> None:
        if self.stream is stream and self.stream_open:
            self.stream_open = False
            self.last_seen = time.monotonic()

    # -- life -----------------------------------------------------------------------------

    @property
    def in_flight(self) -> int:
        return len(self.engine.in_flight)

    def idle_for(self, now: float) -> float:
        if self.in_flight or self.stream_open or self._open:
            return 0.0
        return now - self.last_seen

    def left_clean(self) -> bool:
        """Nothing of its last request is left: it can serve another as if new."""
        # An exchange ended leaves no id or token behind (`end`), so `_open` says it for all.
        engine = self.engine
        return not (self._open or engine.in_flight or engine.relayed or engine.resource_uris
                    or self._stream is not None or self.jobs.running())

    async def close(self) -> None:
        if self.engine.held_scope is self.engine:  # its held results end with it
            self.face.gate.held.drop_session(self.engine)
        if self.engine in self.face.sessions:
            self.face.sessions.remove(self.engine)
        for exchange in list(self._open):
            exchange.end()
        if self.stream_open:
            self.stream.put(b"")  # wakes the GET writer, which then ends
        elif self._stream is not None:
            self._stream.discard()
        await self.jobs.aclose()


class SessionTable:
    """Sessions by id, capped, expired when idle."""

    def __init__(self, face: Face, redactor: Redactor, cap: int, idle_seconds: float) -> None:
        self.face = face
        self.redactor = redactor
        self.cap = cap
        self.idle_seconds = idle_seconds
        self.sessions: dict[str, HttpSession] = {}
        # Stateless requests' sessions, unlisted, while their request runs (for the shutdown).
        # A plain set, left by `passed`: a WeakSet costs a weak reference and its callback
        # per request, on the path every stateless call takes.
        self.passing: set[HttpSession] = set()
        # Transient sessions left clean by their request, for the next one: building and
        # closing a session, its dispatcher and its jobs cost a stateless call ~300 bytecodes.
        self._idle: list[HttpSession] = []

    def get(self, ident: str) -> HttpSession | None:
        return self.sessions.get(ident)

    def create(self) -> HttpSession | None:
        """A new registered session, or None at the cap."""
        if len(self.sessions) >= self.cap:
            return None
        session = HttpSession(self.face, self.redactor, new_session_id())
        assert session.id is not None
        self.sessions[session.id] = session
        self.face.sessions.append(session.engine)
        return session

    def transient(self) -> HttpSession:
        """A session for one 2026-07-28 request: not listed, no id, gone after it (or kept
        idle for the next one, when it is left as it was made: see `passed`)."""
        session = self._idle.pop() if self._idle else self._fresh_transient()
        self.passing.add(session)
        return session

    def _fresh_transient(self) -> HttpSession:
        session = HttpSession(self.face, self.redactor)
        session.engine.announced = True
        return session

    async def passed(self, session: HttpSession) -> None:
        """A transient session's request is over: it leaves the table, and is kept for the
        next stateless request when nothing of this one is left in it (no request in flight,
        no job running, no question out, no exchange, no stream); else it closes. The route
        sets everything a request brings (capabilities, caller scope, answer stamp) anew."""
        if not self.kept(session):
            await session.close()

    def kept(self, session: HttpSession) -> bool:
        """`passed` without the close: False when the caller must close the session."""
        self.passing.discard(session)
        if len(self._idle) < IDLE_TRANSIENTS and session.left_clean():
            self._idle.append(session)
            return True
        return False

    async def drop(self, ident: str, *, release: bool = True) -> bool:
        """End a session; with `release`, the subscriptions only it held are given back upstream."""
        session = self.sessions.pop(ident, None)
        if session is None:
            return False
        await session.close()
        if release:
            await unsubscribe_left(self.face, session.engine.resource_uris)
        return True

    async def expire(self) -> int:
        now = time.monotonic()
        stale = [i for i, s in self.sessions.items() if s.idle_for(now) > self.idle_seconds]
        for ident in stale:
            await self.drop(ident)
        return len(stale)

    def in_flight(self) -> int:
        return sum(s.in_flight for s in self.sessions.values())

    def answer_in_flight(self, why: str) -> int:
        """Every request still in flight, in a session or a stateless one, gets its shutdown
        error now, into the exchange (JSON or event stream) its POST is waiting on."""
        every = [*self.sessions.values(), *self.passing]
        return sum(answer_in_flight(session.engine, why) for session in every)

    async def close_all(self) -> None:
        idle, self._idle = self._idle, []
        for session in idle:
            await session.close()
        for ident in list(self.sessions):
            await self.drop(ident, release=False)  # shutting down: the upstreams stop too


async def unsubscribe_left(face: Face, uris: Iterable[str]) -> None:
    """Of the URIs a closed session asked for, those no session or listen stream still asks
    for are unsubscribed upstream (a 2026-07-28 one drops them from the sidecar's listen
    filter), each bounded; a refusal is logged and left: the updates it still sends reach
    nobody."""
    for uri in sorted(uris):
        if any(subscribers(face.sessions, uri)):
            continue
        try:
            upstream = face.find_resource_upstream(uri)
            if not watched_on_stateless(upstream, uri, subscribe=False):
                conn = upstream.ready_connection()
                await conn.request("resources/unsubscribe", {"uri": uri}, deadline=UNSUBSCRIBE_SECONDS)
        except SidecarError as exc:
            log.info("a closed session's subscription to %s was not given back: %s", uri, exc.message)

