"""What a gate is given at construction besides its config and its pool.

Owns `GateParts`, the one way the composition root (`sidecar.hub.assemble`) hands a gate
its collaborators: the catalog holder, the audit log, the state shared with other
replicas (`store.url`: held results, spent confirmation states, pins), where the
confirmation key's variable is read, and the observers and the stage around the call
(traces, metrics). Nothing sets a gate's attributes from outside afterwards.

`SharedState` is the seam to `sidecar.store`: the gate wraps its own local stores with
it, so the redis client and the store package stay out of the gate's imports.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from sidecar.gate.observers.record import Observer
from sidecar.gate.stages.base import Stage

if TYPE_CHECKING:
    from sidecar.catalog import LiveCatalog
    from sidecar.gate.observers.audit import AuditLog
    from sidecar.gate.budget.held import HeldStore
    from sidecar.gate.budget.store import SharedHeldStore

__all__ = ["GateParts", "SharedState"]


class SharedState(Protocol):
    """State one bot's face shares with its other replicas (`sidecar.store.share`)."""

    spent: Any  # where used confirmation state ids go (`sidecar.gate.confirmation.stage.SpentStates`)

    def held(self, local: HeldStore) -> SharedHeldStore:
        """The held store, shared, around this replica's own."""
        ...

    def pins(self, local: Any) -> Any:
        """The pin store, shared, around this replica's own (the health file's, or None)."""
        ...


class GateParts(msgspec.Struct, frozen=True, kw_only=True):
    live: LiveCatalog | None = None  # the face's catalog holder (a gate alone makes an empty one)
    audit: AuditLog | None = None
    shared: SharedState | None = None  # `store.url` is set and this face serves stateless callers
    environ: Mapping[str, str] | None = None  # the confirmation key's variable (`sidecar.settings`)
    around_call: tuple[Stage, ...] = ()  # right around the terminal (a client span)
    observers: tuple[Observer, ...] = ()  # watchers of finished calls (metrics, span decisions)
