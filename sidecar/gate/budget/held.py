"""Held results: oversized JSON payloads kept by the gate for `query_result`.

Owns the bytes, per upstream, within a byte cap (oldest evicted first). A handle is 128
random bits and bound to the scope it was held in: a handle of another scope, an evicted
one and a made-up one all look the same. A scope is any hashable value compared with
`==`: an engine session (stdio, or an HTTP session: its results end with it), or a
`CallerScope` (2026-07-28 stateless requests: every request of one caller identity).
The whole interface is `hold` (put), `get` and `drop_session` (evict), by scope and handle.
"""

from __future__ import annotations

from collections import OrderedDict

import msgspec

__all__ = ["CallerScope", "HeldResult", "HeldStore", "TooBigToHold"]


class CallerScope(msgspec.Struct, frozen=True):
    """The held scope of stateless requests: one caller identity (a token's digest)."""

    identity: str


class TooBigToHold(Exception):
    def __init__(self, size: int, cap: int) -> None:
        super().__init__(f"the result is {size:,} bytes, more than the {cap:,} bytes the sidecar holds per server")
        self.size = size
        self.cap = cap


class HeldResult(msgspec.Struct, frozen=True):
    handle: str
    session: object
    upstream: str
    tool: str
    payload: bytes


class HeldStore:
    def __init__(self, cap_per_upstream: int) -> None:
        self.cap = cap_per_upstream
        self._by_upstream: dict[str, OrderedDict[str, HeldResult]] = {}
        self._bytes: dict[str, int] = {}

    def hold(self, session: object, upstream: str, tool: str, payload: bytes) -> str:
        if len(payload) > self.cap:
            raise TooBigToHold(len(payload), self.cap)
        held = self._by_upstream.setdefault(upstream, OrderedDict())
        while held and self._bytes.get(upstream, 0) + len(payload) > self.cap:
            _, oldest = held.popitem(last=False)
            self._bytes[upstream] -= len(oldest.payload)
        import secrets  # only a result over budget is held: off the start path

        handle = "h_" + secrets.token_urlsafe(16)
        held[handle] = HeldResult(handle, session, upstream, tool, payload)
        self._bytes[upstream] = self._bytes.get(upstream, 0) + len(payload)
        return handle

    def get(self, session: object, handle: object) -> HeldResult | None:
        if not isinstance(handle, str):
            return None
        for held in self._by_upstream.values():
            found = held.get(handle)
            if found is not None:
                return found if found.session == session else None
        return None

    async def settle(self, handle: str) -> None:
        """Held at once in the process: nothing to wait for (a shared store writes here)."""

    async def fetch(self, session: object, handle: object) -> HeldResult | None:
        """`get`, in the shape a shared store answers (sidecar.gate.budget.store)."""
        return self.get(session, handle)

    def held_bytes(self, upstream: str | None = None) -> int:
        if upstream is not None:
            return self._bytes.get(upstream, 0)
        return sum(self._bytes.values())

    def drop_session(self, session: object) -> None:
        for upstream, held in self._by_upstream.items():
            for handle in [h for h, r in held.items() if r.session == session]:
                self._bytes[upstream] -= len(held.pop(handle).payload)
