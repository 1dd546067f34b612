"""A plain call under way with no task of its own (`Gate.start`), and how it ends.

A call whose whole way is plain (resolved in place to a listed tool, no stage between the
charge and the terminal, no deadline, no `_meta`) waits for one thing only: its upstream's
answer. `Gate.start` runs its prefix in the reader's callback (resolve, then the request
written upstream) and returns a `Started`, the connection's waiter for the answer (no
future: the answer ends it there and then); the front arms it with its answering, where
`end` does what `Gate.run` does after the terminal's await: the route's ending (as
`sidecar.gate.route.route_upstream` ends a call), the charge, the one ending and the one
record. What must still wait (a server's questions, a
large answer scrubbed off the loop, a result over budget) is handed back as an awaitable
for `Gate.run(call, tail)` to finish in a task, so every call still ends once and is
recorded once, whichever way it went.
"""

from __future__ import annotations

import asyncio
import logging
from time import perf_counter
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from sidecar.errors import CallCancelled, SidecarError, UpstreamError
from sidecar.gate.call import StageFault, ToolCall
from sidecar.gate.route import ASKS, SCRUB_IN_THREAD, failed_upstream, route_tail, scrub_answer
from sidecar.redact import Redactor
from sidecar.upstream import Connection
from sidecar.upstream.connection import upstream_error
from sidecar.wire import UpstreamFrame

if TYPE_CHECKING:  # an annotation only: the stages package loads the charge after this room
    from sidecar.gate.budget.stage import ChargeResult

__all__ = ["Ending", "Started", "stage_broke"]

log = logging.getLogger("sidecar.gate.chain")  # the chain's words, whichever way the call ran

_EMPTY_RESULT = msgspec.Raw(b"{}")
_STOPPED_WAITING = "the sidecar stopped waiting for this request"


class Ending(Protocol):
    """What a started call's end needs of its gate: the charge, and the one ending's guard
    with the one record (`Gate.close`)."""

    charge: ChargeResult
    recording: bool  # a watcher of finished calls reads each record (`Gate.close`)

    def close(self, call: ToolCall) -> None: ...


class Started(msgspec.Struct, eq=False):
    """A plain call whose request went upstream: the connection's waiter for its answer
    (`sidecar.upstream.connection.Waiter`) and its owner's held work (`Jobs.hold`), with
    no future: the answer, a fault or a cancellation ends it there and then, and `then`
    (the front's answering, given by `arm`) runs at once. A struct: made per call with no
    Python `__init__`; compared and hashed by identity (its owner keeps it in a set)."""

    call: ToolCall
    conn: Connection
    params: dict[str, Any]
    scrub: Redactor | None  # None when the servers' facts hide nothing (`ServerFacts.scrubbing`)
    gate: Ending
    ident: int = 0
    over: bool = False  # its answer, fault or cancellation came (set once)
    frame: UpstreamFrame | None = None
    fault: BaseException | None = None
    then: Callable[[Started], object] | None = None  # armed: the front's answering
    front: Any = None  # what `then` answers through, and the request it answers (the front's own,
    request: Any = None  # given by `arm`: no bound method or struct of the front's per call)
    watchers: list[Callable[[Started], object]] | None = None  # a settling owner's (`Jobs.settle`)

    # -- the waiter the connection ends (`Waiter`), and the owner's held work (`Held`) --

    def done(self) -> bool:
        return self.over

    def set_result(self, frame: UpstreamFrame, /) -> None:
        if self.over:
            return
        self.over, self.frame = True, frame
        then = self.then
        if then is not None:  # `_ended`, inline: every answer comes this way
            try:
                then(self)
            except Exception as exc:
                self._broke(exc)
            if self.watchers is not None:
                self._tell()

    def set_exception(self, exception: BaseException, /) -> None:
        if not self.over:
            self.over, self.fault = True, exception
            if self.then is not None:
                self._ended()

    def exception(self) -> BaseException | None:
        return None  # a fault is this call's own: `end` reads it

    def cancel(self) -> bool:
        """Its owner closed (the session is gone): it ends now, cancelled."""
        if self.over:
            return False
        self.set_exception(asyncio.CancelledError())
        return True

    def add_done_callback(self, fn: Callable[[Started], object], /) -> None:
        if self.over and self.then is not None:
            fn(self)
        else:
            self.watchers = [*(self.watchers or ()), fn]

    def arm(self, then: Callable[[Started], object], front: Any = None, request: Any = None) -> None:
        """`then` runs once it ended (at once, from the connection); if it ended already
        (a transport that faulted while sending), in the loop's next turn, as a future's
        done callback would have. `front` and `request` are kept for `then` to read."""
        self.then, self.front, self.request = then, front, request
        if self.over:
            asyncio.get_running_loop().call_soon(self._ended)

    def _ended(self) -> None:
        then = self.then
        assert then is not None
        try:
            then(self)
        except Exception as exc:
            self._broke(exc)
        if self.watchers is not None:
            self._tell()

    def _broke(self, exc: Exception) -> None:
        """Its answering raised: logged as a done callback's exception would be."""
        log.error("answering a plain call to %s failed: %s", self.call.ran, type(exc).__name__, exc_info=exc)

    def _tell(self) -> None:
        watchers, self.watchers = self.watchers, None
        for watcher in watchers or ():
            watcher(self)

    def passing(self) -> msgspec.Raw | None:
        """Once it ended: its answer's result when the call completes with it as it came
        (no error, nothing to scrub, no server's question, under every budget) and no
        watcher reads the call's record; the front writes it to the engine first and then
        ends the call with `passed`, so what is left of the call's end is not on the
        answer's way. None otherwise: `end` ends it, before its answer."""
        frame = self.frame
        if frame is None or frame.error or self.scrub is not None:
            return None
        answer = frame.result or _EMPTY_RESULT
        gate = self.gate
        # under every budget: what `ChargeResult.completed` charges `pass`, read as it reads it
        if gate.recording or len(answer) > gate.charge.current.live.facts.smallest_budget \
                or ASKS.search(answer) is not None:
            return None
        return answer

    def passed(self, result: msgspec.Raw) -> None:
        """The call's end once `passing`'s result went: completed with it, charged as
        passing, and closed once, as `end` would have done (`ToolCall.complete` inline:
        nothing but this ends a call whose `over` was set by an answer)."""
        call = self.call
        if call.outcome is None:  # `complete`'s guard; then what it sets, and the charge
            size = len(result)
            call.result, call.outcome, call.ended = result, "completed", perf_counter()
            call.charge, call.bytes_in, call.bytes_out = "pass", size, size
        else:  # ended before (no way does): `complete` raises, and the call is overruled
            try:
                call.complete(result)
            except Exception as exc:
                stage_broke(call, exc)
        self.gate.close(call)

    def end(self) -> Awaitable[Any] | None:
        """Once it ended: the call is ended and recorded now (None), or what it still waits
        for is returned (`Gate.run(call, tail)` ends and records it). A cancelled wait (the
        session closed) tells the upstream to stop, is recorded as cancelled, and raises
        CancelledError."""
        call = self.call
        try:
            fault = self.fault
            if fault is not None:
                raise fault
            frame = self.frame
            assert frame is not None
            if frame.error:
                raise upstream_error(frame.error)
            answer = frame.result if frame.result else _EMPTY_RESULT
            scrub = self.scrub
            if ASKS.search(answer) is not None or scrub is not None and len(answer) > SCRUB_IN_THREAD:
                call.charge_due = True  # `Gate.run` charges it once the tail ended it
                return route_tail(call, self.conn, self.params, answer, None, scrub, None)
            result = answer if scrub is None else scrub_answer(answer, scrub)
            call.complete(result)
            over = self.gate.charge.completed(call, len(result))
            if over is not None:
                return over
        except asyncio.CancelledError:  # the session closed (`Jobs.aclose` cancelled it)
            self.conn.cancel(self.ident, _STOPPED_WAITING)
            if call.outcome is None:
                call.fail(CallCancelled("the call was cancelled before it ended"))
            self.gate.close(call)
            raise
        except UpstreamError as exc:  # the upstream's own error, as redacted as its results
            failed_upstream(call, exc, self.scrub)
        except SidecarError as exc:  # a fault of the transport, or the engine's cancel
            if call.outcome is None:
                call.fail(exc)
        except Exception as exc:
            stage_broke(call, exc)
        self.gate.close(call)
        return None


def stage_broke(call: ToolCall, exc: Exception) -> None:
    """A stage raised what no stage expected: logged, and the call failed with it (or,
    ended already, overruled: what it left cannot be trusted)."""
    log.warning("a gate stage failed on a call to %s: %s", call.ran, type(exc).__name__)
    log.debug("the gate stage failed with this traceback", exc_info=exc)
    fault = StageFault(exc)
    if call.outcome is None:
        call.fail(fault)
    else:
        call.overrule(fault)
