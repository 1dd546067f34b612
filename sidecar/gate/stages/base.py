"""What every stage shares: the shape of a stage, and the tables the face swaps in.

A stage is any `async (call, call_next) -> ToolCall` (a stage object's `__call__`, or a
plain function such as the tracer's client span). It passes the call on with
`await call_next(call)`, or ends it by finishing the record (`complete`/`fail`) and
returning it, never by raising on purpose.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from sidecar.catalog import LiveCatalog
from sidecar.catalog.live import ReadsLive
from sidecar.gate.call import ToolCall
from sidecar.gate.budget.held import HeldStore
from sidecar.gate.budget.store import SharedHeldStore

__all__ = ["Current", "Next", "Stage"]

Next = Callable[[ToolCall], Awaitable[ToolCall]]
Stage = Callable[[ToolCall, Next], Awaitable[ToolCall]]


class Current(ReadsLive):
    """The catalog, the listing and the held store as they are now. The catalog and
    listing are the face's one holder (`LiveCatalog`, swapped by the hub as upstreams
    change); a shared store may replace the held store at start-up. Every stage that reads
    them holds this one object, so a swap reaches all."""

    __slots__ = ("live", "held")

    def __init__(self, held: HeldStore | SharedHeldStore, live: LiveCatalog | None = None) -> None:
        self.live = live if live is not None else LiveCatalog()
        self.held = held

