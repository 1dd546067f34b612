"""A plain call under way with no task of its own (`Gate.start`), and how it ends.

A call whose whole way is plain (resolved in place to a listed tool, no stage between the
charge and the terminal, no deadline, no `_meta`) waits for one thing only: its upstream's
answer. `Gate.start` runs its prefix in the reader's callback (resolve, then `start_call`
here: the request written upstream) and returns a `Started`; the front adds a done
callback to its `future`, where `end` does what `Gate.run` does after the terminal's
await: the route's ending (as `sidecar.gate.route.route_upstream` ends a call), the
charge, the one ending and the one record. What must still wait (a server's questions, a
large answer scrubbed off the loop, a result over budget) is handed back as an awaitable
for `Gate.run(call, tail)` to finish in a task, so every call still ends once and is
recorded once, whichever way it went.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from sidecar.catalog.facts import ServerFacts
from sidecar.errors import CallCancelled, SidecarError, UpstreamError
from sidecar.gate.call import StageFault, ToolCall
from sidecar.gate.route import ASKS, SCRUB_IN_THREAD, failed_upstream, route_tail, scrub_answer
from sidecar.redact import Redactor
from sidecar.upstream import Connection, Pool
from sidecar.upstream.connection import upstream_error
from sidecar.wire import UpstreamFrame
from sidecar.wire.versions import MODERN_VERSION

if TYPE_CHECKING:  # an annotation only: the stages package loads the charge after this room
    from sidecar.gate.budget.stage import ChargeResult

__all__ = ["Ending", "Started", "stage_broke", "start_call"]

log = logging.getLogger("sidecar.gate.chain")  # the chain's words, whichever way the call ran

_EMPTY_RESULT = msgspec.Raw(b"{}")
_STOPPED_WAITING = "the sidecar stopped waiting for this request"


class Ending(Protocol):
    """What a started call's end needs of its gate: the charge, and the one ending's guard
    with the one record (`Gate.close`)."""

    charge: ChargeResult

    def close(self, call: ToolCall) -> None: ...


class Started(msgspec.Struct):
    """A plain call whose request went upstream; `future` is done when its answer (or its
    fault, or its cancellation) came. A struct: made per call with no Python `__init__`."""

    call: ToolCall
    conn: Connection
    ident: int
    params: dict[str, Any]
    future: asyncio.Future[UpstreamFrame]
    scrub: Redactor | None  # None when the servers' facts hide nothing (`ServerFacts.scrubbing`)
    gate: Ending

    def end(self) -> Awaitable[Any] | None:
        """Once `future` is done: the call is ended and recorded now (None), or what it still
        waits for is returned (`Gate.run(call, tail)` ends and records it). A cancelled wait
        (the session closed) tells the upstream to stop, is recorded as cancelled, and
        raises CancelledError."""
        call = self.call
        try:
            frame = self.future.result()
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
        except asyncio.CancelledError:  # the session closed (`Jobs.aclose` cancelled the future)
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


def start_call(call: ToolCall, pool: Pool, facts: ServerFacts, gate: Ending,
               modern_engine: bool = False) -> Started | None:
    """A resolved plain call sent upstream now (its `on_sent` told where, when it has one).
    None when it has a deadline (`asyncio.timeout` needs a task), its upstream is not
    ready, or a 2026-07-28 engine (`modern_engine`) calls a 2026-07-28 server (its round
    is relayed: `sidecar.gate.route`): nothing was sent, and the chain runs the call."""
    target = call.target
    assert target is not None
    alias = target.alias
    if facts.deadlines.get(alias) is not None:
        return None
    upstream = pool.upstreams.get(alias)
    if upstream is None:
        return None
    if modern_engine and upstream.info is not None and upstream.info.protocol_version == MODERN_VERSION:
        return None
    try:
        conn = upstream.ready_connection()
    except SidecarError:
        return None
    params: dict[str, Any] = {"name": target.name, "arguments": call.arguments}
    ident, future = conn.start_call(params)
    if call.on_sent is not None:
        call.on_sent(conn, ident)
    return Started(call, conn, ident, params, future, facts.scrubbing, gate)


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
