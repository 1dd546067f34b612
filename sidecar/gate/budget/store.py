"""Held results that replicas share: the store seam, and the held store that uses it.

Owns the `Backend` protocol a shared store implements (`put`, `get`: async, each bounded
in time, raising `StoreUnavailable` when the store cannot answer), the owner name a caller
has on every replica (`owner_of_identity`: the face's bot and name with the caller's
identity, hashed; never a session object), and `SharedHeldStore`, which the gate uses in
place of the in-process `HeldStore` when `store.url` is set (`sidecar.store.share`
puts it there).

What goes where: results held for a `CallerScope` (the 2026-07-28 stateless requests of
one caller identity) go to the backend, so a `query_result` on any replica finds them,
still bound to their owner (a handle of another owner looks missing). Results of a 2025 session stay in the process
that holds the session (a load balancer keeps a session on one replica; see the README).

Outages: a result that must be held and cannot be gets a clear tool error instead (the
result is never shown whole, and never held twice: one write per handle, retried never);
a `query_result` that cannot reach the store fails with a clear error; calls that need
no store go on. A write that timed out may still land; its owner never got the handle,
and the store forgets it at its TTL.
"""

from __future__ import annotations

import hashlib
from typing import Protocol

from sidecar.config import Store
from sidecar.errors import StoreUnavailable  # raised here; the one error tree owns it
from sidecar.gate.budget.held import CallerScope, HeldResult, HeldStore, TooBigToHold

__all__ = ["Backend", "SharedHeldStore", "StoreUnavailable", "owner_of_identity"]


class Backend(Protocol):
    """Where shared held results live. Each call is bounded in time by the backend."""

    async def put(self, owner: str, held: HeldResult, cap: int) -> int:
        """Keep `held` for `owner`, evicting that owner's oldest results of the same upstream
        beyond `cap` bytes; returns the bytes then held for (owner, upstream)."""
        ...

    async def get(self, owner: str, handle: str) -> HeldResult | None:
        """The result, when it exists and belongs to `owner`; else None."""
        ...

    async def close(self) -> None: ...


def owner_of_identity(*parts: str) -> str:
    """A stable, non-reversible owner name for a caller identity (bot id, bearer...)."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


class SharedHeldStore:
    """The gate's held store with a backend for shared scopes; sessions stay local."""

    def __init__(self, local: HeldStore, backend: Backend, namespace: str) -> None:
        self.local = local
        self.namespace = namespace  # the bot and face: replicas serving them share it
        self.cap = local.cap
        self.backend = backend
        self._pending: dict[str, tuple[str, HeldResult]] = {}  # handle -> (owner, result), until settled
        self._seen_bytes: dict[str, int] = {}  # upstream -> bytes held, as this replica last saw

    def hold(self, session: object, upstream: str, tool: str, payload: bytes) -> str:
        """Sync (the budget calls it mid-shape, maybe in a worker): a shared scope's result
        waits in `_pending` until the gate awaits `settle`."""
        if not isinstance(session, CallerScope):
            return self.local.hold(session, upstream, tool, payload)
        if len(payload) > self.cap:
            raise TooBigToHold(len(payload), self.cap)
        import secrets  # only a result over budget is held: off the start path

        handle = "h_" + secrets.token_urlsafe(16)
        self._pending[handle] = (self._owner(session), HeldResult(handle, None, upstream, tool, payload))
        return handle

    def _owner(self, scope: CallerScope) -> str:
        return owner_of_identity(self.namespace, scope.identity)

    async def settle(self, handle: str) -> None:
        """Write a pending result once; StoreUnavailable when the store does not take it."""
        pending = self._pending.pop(handle, None)
        if pending is None:
            return
        owner, held = pending
        self._seen_bytes[held.upstream] = await self.backend.put(owner, held, self.cap)

    async def fetch(self, session: object, handle: object) -> HeldResult | None:
        if not isinstance(session, CallerScope):
            return await self.local.fetch(session, handle)
        if not isinstance(handle, str) or not handle.startswith("h_") or len(handle) > 64:
            return None
        return await self.backend.get(self._owner(session), handle)

    def get(self, session: object, handle: object) -> HeldResult | None:
        return self.local.get(session, handle)

    def held_bytes(self, upstream: str | None = None) -> int:
        shared = self._seen_bytes.get(upstream, 0) if upstream is not None else sum(self._seen_bytes.values())
        return self.local.held_bytes(upstream) + shared

    def drop_session(self, session: object) -> None:
        self.local.drop_session(session)
