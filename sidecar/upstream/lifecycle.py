"""An upstream's lifecycle: its states, the moves allowed between them, and what they mean.

Owns the one table of allowed transitions and the one function, `move`, through which
every change of an upstream's state goes. A move the table does not hold is a bug in the
supervisor, never a fault of the upstream: it raises `IllegalTransition`, which is not a
`SidecarError`, so no handler meant for upstream trouble swallows it.

    from            allowed to
    starting        ready, failed, needs-sign-in, stopped
    ready           restarting, needs-sign-in, stopped
    restarting      ready, restarting, paused, needs-sign-in, stopped
    failed          ready, failed, paused, needs-sign-in, stopped
    paused          ready, restarting, failed, needs-sign-in, stopped
    needs-sign-in   ready, restarting, failed, paused, needs-sign-in, stopped
    stopped         (none: the supervisor has ended)

`starting` is the first start only; a later start is `restarting` (it was ready once) or
`failed` (it never was). `paused` is the open circuit after a burst of crashes. A state
may follow itself where a new attempt ends the same way (its reason is then renewed).
The callers ask the predicates below rather than comparing names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, get_args

__all__ = [
    "UpstreamState", "STATES", "ALLOWED", "IllegalTransition", "move",
    "is_ready", "is_starting", "coming_back", "needs_sign_in",
]

UpstreamState = Literal["starting", "ready", "restarting", "failed", "paused", "needs-sign-in", "stopped"]
STATES: tuple[UpstreamState, ...] = get_args(UpstreamState)

ALLOWED: Mapping[UpstreamState, frozenset[UpstreamState]] = {
    "starting": frozenset({"ready", "failed", "needs-sign-in", "stopped"}),
    "ready": frozenset({"restarting", "needs-sign-in", "stopped"}),
    "restarting": frozenset({"ready", "restarting", "paused", "needs-sign-in", "stopped"}),
    "failed": frozenset({"ready", "failed", "paused", "needs-sign-in", "stopped"}),
    "paused": frozenset({"ready", "restarting", "failed", "needs-sign-in", "stopped"}),
    "needs-sign-in": frozenset({"ready", "restarting", "failed", "paused", "needs-sign-in", "stopped"}),
    "stopped": frozenset(),
}

_COMING_BACK: frozenset[UpstreamState] = frozenset({"restarting", "paused", "failed"})


class IllegalTransition(RuntimeError):
    """A state change the table does not allow: a bug in the supervisor."""

    def __init__(self, alias: str, current: UpstreamState, new: UpstreamState) -> None:
        super().__init__(f"upstream '{alias}': no transition from {current!r} to {new!r}")
        self.alias, self.current, self.new = alias, current, new


def move(alias: str, current: UpstreamState, new: UpstreamState) -> UpstreamState:
    """`new`, when the table allows it after `current`; IllegalTransition otherwise."""
    if new not in ALLOWED[current]:
        raise IllegalTransition(alias, current, new)
    return new


def is_ready(state: UpstreamState) -> bool:
    """Connected, started and listed: calls go through."""
    return state == "ready"


def is_starting(state: UpstreamState) -> bool:
    """Still on its first start: nothing is known of it yet."""
    return state == "starting"


def coming_back(state: UpstreamState) -> bool:
    """Down for now, with a restart to follow (after a backoff or the open circuit)."""
    return state in _COMING_BACK


def needs_sign_in(state: UpstreamState) -> bool:
    """Out until a person signs in (`omb-sidecar signin NAME`)."""
    return state == "needs-sign-in"
