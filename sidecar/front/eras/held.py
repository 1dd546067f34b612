"""One engine request held open across the rounds of the 2026-07-28 revision, while a
session-era upstream waits for the answer to a question it asked mid-call.

A stateless engine cannot be sent a request. So when the upstream serving this call
asks (`elicitation/create`, `sampling/createMessage`, `roots/list`), the round the engine
is waiting on ends with an input-required result carrying the question, and the call
itself stays where it is: its task, its upstream request and the upstream's question,
in this process. The engine's next round (the same request again, with its answer and
the state) hands the answer to the upstream and waits for what comes next: the call's
result or another question.

Owns the held call's engine session (registered with the face only so the face can hand
it the upstream's questions: it lets through no broadcast), its rounds (one HTTP exchange
each; what the call produces goes to the round that is open), its questions (asked one
at a time, at most `MAX_WAITING` queued; more are refused to the upstream) and its end:
the result, the client of a round hanging up, or `seconds` without the engine coming
back, after which the upstream's question gets an error answer and its call a cancel.
Refuses a question that is not this call's (another call on the same connection).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from typing import Any

from sidecar.concurrency import Jobs
from sidecar.errors import INTERNAL_ERROR, INVALID_PARAMS
from sidecar.front.dispatcher import Dispatcher
from sidecar.front.eras.asking import EngineAnswer
from sidecar.front.http.sessions import Exchange
from sidecar.gate.budget.held import CallerScope
from sidecar.hub.face import Face
from sidecar.hub.session import EngineSession
from sidecar.redact import Redactor
from sidecar.wire import Answer, ErrorAnswer, Event, Notice, Relayed, Request, RequestId, Response, encode_event
from sidecar.wire.requests import PROGRESS_TOKEN
from sidecar.wire.versions import MODERN_VERSION

__all__ = ["HeldCall", "MAX_QUESTIONS", "MAX_WAITING", "Round", "NO_ANSWER"]

log = logging.getLogger(__name__)

MAX_WAITING = 8  # questions an upstream may have queued on one held call
MAX_QUESTIONS = 16  # questions one call may put to its engine in all; an upstream that asks forever is stopped
NO_ANSWER = -32001  # what the upstream hears when the engine never answered (or answered nothing)
_PASSED = frozenset({"notifications/progress"})  # the only notices a held call's engine session lets through


class Round:
    """One round: the HTTP exchange the engine waits on, under the id it sent this time."""

    def __init__(self, exchange: Exchange, ident: RequestId, encode: Callable[[Answer], bytes],
                 token: object) -> None:
        self.exchange, self.id, self.encode, self.token = exchange, ident, encode, token
        self.call: HeldCall | None = None  # the held call this round serves, once there is one

    def refuse(self, method: str, message: str) -> None:
        """One answer that ends the round: invalid params, whatever the method, as a
        2026-07-28 server answers a request state it cannot honour (the engine's client
        then sends the request again without it)."""
        self.exchange.put(encode_event(ErrorAnswer(self.id, INVALID_PARAMS, message)))
        self.exchange.answered(self.id, INVALID_PARAMS)


class HeldSession(EngineSession):
    """The engine side of a held call: hears its own call's progress and questions only."""

    call_bound = True

    def notify(self, method: str, params: Any = None) -> None:
        if method in _PASSED:
            super().notify(method, params)


class HeldCall:
    """`on_question(call, relayed)` is told each question put to the engine (the owner seals
    its state and ends the round with `put_question`); `on_end(call)` once, when the call
    is over, whatever the cause."""

    def __init__(self, face: Face, redactor: Redactor, req: Request, caller: str,
                 capabilities: dict[str, Any], seconds: float) -> None:
        self.face, self.request, self.seconds, self.caller = face, req, seconds, caller
        self.engine = HeldSession(emit=self._event)
        self.engine.protocol_version = MODERN_VERSION
        self.engine.client_capabilities = capabilities
        self.engine.held_scope = CallerScope(caller)
        self.engine.announced = True
        self.jobs = Jobs()
        # `hold`: a plain call goes upstream with no task of its own, as in a session; a
        # question its upstream asks reaches `_event` all the same (the face finds the call
        # by where it went), and an answer that must wait takes a task then.
        self.dispatcher = Dispatcher(face, self.engine, self.jobs.spawn, redactor, hold=self.jobs.hold)
        self.round: Round | None = None
        self.questions: deque[Relayed] = deque()
        self.asked: Relayed | None = None  # put to the engine, its answer awaited
        self.final: Event | None = None  # the call's answer, come while no round was open
        self.on_question: Callable[[HeldCall, Relayed], None] = lambda call, relayed: None
        self.on_end: Callable[[HeldCall], None] = lambda call: None
        self.state_ids: set[str] = set()
        self.rounds = 0  # questions put to the engine so far
        self._timer: asyncio.TimerHandle | None = None
        self.over = False

    # -- rounds -------------------------------------------------------------------------

    def start(self, first: Round) -> None:
        self.round, first.call = first, self
        self.face.sessions.append(self.engine)
        self.dispatcher.take(self.request)

    def resume(self, next_round: Round, answer: object) -> None:
        """The engine is back with `answer` to the question it was asked."""
        self._stop_timer()
        self.round, next_round.call = next_round, self
        asked, self.asked = self.asked, None
        if asked is not None:
            self.dispatcher.take(_response(asked.id, answer))
        if self.final is not None:
            self._finish(self.final)
        elif self.questions:
            self._put_next()

    def round_gone(self, gone: Round) -> None:
        """The HTTP request of `gone` ended; if it ended unanswered, its client hung up
        and the call stops (as a session's request does when its client goes)."""
        if self.round is gone and gone.exchange.waiting:
            self.round = None
            self.stop("the client of the held call went away")

    # -- what the call sends toward the engine -------------------------------------------

    def _event(self, event: Event) -> None:
        if type(event) is Answer or type(event) is ErrorAnswer:
            if event.id == self.request.id:
                self._finish(event)
        elif type(event) is Relayed:
            self._question(event)
        elif type(event) is Notice and self.round is not None:
            self._progress(self.round, event)

    def _progress(self, current: Round, notice: Notice) -> None:
        if current.exchange.streaming and current.token is not None and isinstance(notice.params, dict):
            params = {**notice.params, PROGRESS_TOKEN: current.token}  # this round's token, not the first's
            current.exchange.frames.offer(encode_event(Notice(notice.method, params)), notice.method)

    def _question(self, relayed: Relayed) -> None:
        sent = dict(self.engine.relayed.items()).get(relayed.id)
        mine = sent is not None and (isinstance(sent[0], EngineAnswer)  # a 2026-07-28 server's, for this call
                                     or any(s is not None and s[0] is sent[0] for s in self.engine.in_flight.values()))
        if not mine or len(self.questions) >= MAX_WAITING or self.over:
            why = "another call's question" if not mine else "too many questions waiting"
            self.dispatcher.take(Response(relayed.id, error={"code": INTERNAL_ERROR, "message": f"refused: {why}"}))
            return
        self.questions.append(relayed)
        if self.asked is None and self.round is not None:
            self._put_next()

    def _put_next(self) -> None:
        self.asked = self.questions.popleft()
        self.rounds += 1
        if self.rounds > MAX_QUESTIONS:
            self.stop(f"the server asked more than {MAX_QUESTIONS} questions in one call")
            return
        self.on_question(self, self.asked)

    def put_question(self, result: dict[str, Any]) -> None:
        """End the open round with the input-required `result`; the engine now holds the question."""
        current, self.round = self.round, None
        assert current is not None
        current.exchange.put(encode_event(Answer(current.id, result)))  # an interim result: no caching hints
        current.exchange.answered(current.id)
        self._timer = asyncio.get_running_loop().call_later(self.seconds, self._engine_gone)

    def _finish(self, event: Answer | ErrorAnswer | Event) -> None:
        current = self.round
        if current is None:
            self.final = event
            return
        self.round = None
        if type(event) is Answer:
            current.exchange.put(current.encode(Answer(current.id, event.result)))
            current.exchange.answered(current.id)
        else:
            assert type(event) is ErrorAnswer
            current.exchange.put(encode_event(ErrorAnswer(current.id, event.code, event.message, event.data, event.raw)))
            current.exchange.answered(current.id, event.code)
        self._close()

    # -- the end -----------------------------------------------------------------------

    def _engine_gone(self) -> None:
        self._timer = None
        log.info("a held call's engine did not come back within %g s: its upstream is told and the call cancelled",
                 self.seconds)
        self.stop(f"the client did not answer within {self.seconds:g} s")

    def stop(self, why: str) -> None:
        """Every question still open gets an error answer, the call is cancelled upstream."""
        if self.over:
            return
        for relayed in ([self.asked] if self.asked is not None else []) + list(self.questions):
            self.dispatcher.take(Response(relayed.id, error={"code": NO_ANSWER, "message": why}))
        self.asked = None
        self.questions.clear()
        self.engine.cancel(self.request.id)
        current, self.round = self.round, None
        if current is not None and current.exchange.waiting:
            current.exchange.put(encode_event(ErrorAnswer(current.id, INTERNAL_ERROR, f"the call was stopped: {why}")))
            current.exchange.answered(current.id, INTERNAL_ERROR)
        self._close()

    def _close(self) -> None:
        if self.over:
            return
        self.over = True
        self._stop_timer()
        if self.engine in self.face.sessions:
            self.face.sessions.remove(self.engine)
        self.on_end(self)

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def aclose(self) -> None:
        await self.jobs.aclose()


def _response(ident: int, answer: object) -> Response:
    """The engine's answer to a relayed question, as if it had come on a session."""
    if isinstance(answer, dict):
        return Response(ident, result=answer)
    return Response(ident, error={"code": NO_ANSWER, "message": "the client sent no answer to this request"})
