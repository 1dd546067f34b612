"""A plain call under way with no task of its own (`Gate.start`), and how it ends.

A call whose whole way is plain (resolved in place to a listed tool, no stage between the
charge and the terminal, no deadline, no `_meta`) waits for one thing only: its upstream's
answer. `Gate.start` runs its prefix in the reader's callback (resolve, the charge's mark,
the request written upstream) and returns a `Started`; the front adds a done callback to
its `future`, where `end` does what `Gate.run` does after the terminal's await: the route's
ending (`sidecar.gate.route.answered`), the charge, the one ending and the one record.
What must still wait (a server's questions, a large answer scrubbed off the loop, a
result over budget) is handed back as an awaitable for `Gate.run(call, tail)` to finish
in a task, so every call still ends once and is recorded once, whichever way it went.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import msgspec

from sidecar.errors import CallCancelled, SidecarError
from sidecar.gate.call import StageFault, ToolCall
from sidecar.gate.route import answered
from sidecar.redact import Redactor
from sidecar.upstream import Connection
from sidecar.wire import UpstreamFrame

if TYPE_CHECKING:  # an annotation only: the stages package loads the charge after this room
    from sidecar.gate.budget.stage import ChargeResult

__all__ = ["Started", "stage_broke"]

log = logging.getLogger("sidecar.gate.chain")  # the chain's words, whichever way the call ran


class Started(msgspec.Struct):
    """A plain call whose request went upstream; `future` is done when its answer (or its
    fault, or its cancellation) came. A struct: made per call with no Python `__init__`."""

    call: ToolCall
    conn: Connection
    ident: int
    params: dict[str, Any]
    future: asyncio.Future[UpstreamFrame]
    scrub: Redactor | None
    charge: ChargeResult
    close: Callable[[ToolCall], None]  # `Gate.close`: the one ending's guard and the one record

    def end(self) -> Awaitable[Any] | None:
        """Once `future` is done: the call is ended and recorded now (None), or what it still
        waits for is returned (`Gate.run(call, tail)` ends and records it). A cancelled wait
        (the session closed) is recorded as cancelled, and CancelledError raised."""
        call = self.call
        try:
            tail: Awaitable[Any] | None = answered(call, self.future, self.conn, self.ident, self.params, self.scrub)
            if tail is None:
                call.charge_due = False
                tail = self.charge.after(call)
            if tail is not None:
                return tail
        except asyncio.CancelledError:
            if call.outcome is None:
                call.fail(CallCancelled("the call was cancelled before it ended"))
            self.close(call)
            raise
        except SidecarError as exc:  # as `Gate.run`: a broken promise not to raise still ends the call once
            if call.outcome is None:
                call.fail(exc)
        except Exception as exc:
            stage_broke(call, exc)
        self.close(call)
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
