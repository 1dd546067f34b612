"""The last answers: what every request still in flight gets when the sidecar stops.

Owns the one door every front passes on its way out (stdio on a signal or at the end of
stdin, each HTTP session and each stateless request after the drain): every request of a
session that has not been answered yet gets its one answer now, an error that names
the shutdown, and its upstream call is cancelled. The request's own task, cancelled
afterwards, finds its id gone from the session's in-flight table and says nothing more,
so each request is answered exactly once (RELIABILITY rule 4). Also owns the exit code
of a process stopped by a signal (`signalled_exit`): 128 + the signal's number, the
shells' convention, so a supervisor can tell "stopped by SIGTERM" from a clean end (0)
and from a failure (1, 2).
"""

from __future__ import annotations

import logging
import signal

from sidecar.errors import INTERNAL_ERROR
from sidecar.hub.session import EngineSession
from sidecar.wire import ErrorAnswer

__all__ = ["SHUTDOWN_CODE", "answer_in_flight", "shutdown_words", "signalled_exit"]

log = logging.getLogger(__name__)

SHUTDOWN_CODE = INTERNAL_ERROR


def shutdown_words(why: str) -> str:
    return f"the sidecar is shutting down ({why}): this request was stopped before it finished; send it again " \
           "once the sidecar is back"


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def answer_in_flight(session: EngineSession, why: str) -> int:
    """Answer each request of `session` still in flight with the shutdown error, cancel
    its upstream call; returns how many were answered."""
    answered = 0
    for ident in list(session.in_flight):
        sent = session.in_flight.pop(ident, None)
        if sent is not None:
            conn, upstream_id = sent
            conn.cancel(upstream_id)
        session.emit(ErrorAnswer(ident, SHUTDOWN_CODE, shutdown_words(why)))
        answered += 1
    if answered:
        log.warning("shutting down (%s): %d requests in flight answered with an error", why, answered)
    return answered


def signalled_exit(signum: int | None) -> None:
    """End the process with 128 + `signum` when a signal stopped it; nothing otherwise."""
    if signum is not None:
        raise SystemExit(128 + signum)
