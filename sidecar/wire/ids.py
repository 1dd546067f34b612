"""Per-connection request ids: never route by the peer's bare id (RELIABILITY rule 1)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["IdAllocator"]

T = TypeVar("T")


class IdAllocator(Generic[T]):
    """Hands out fresh integer ids on one connection and maps them back to what waits."""

    __slots__ = ("_count", "_waiting")

    def __init__(self) -> None:
        self._count = itertools.count(1)
        self._waiting: dict[int, T] = {}

    @property
    def next_id(self) -> Callable[[], int]:
        """The next fresh id, as `allocate` takes it, with no Python call (a counter's own
        `__next__`): for an owner that files its waiter in `waiting` itself, on a hot path."""
        return self._count.__next__

    @property
    def waiting(self) -> dict[int, T]:
        """The table itself (id -> waiter), for an owner that releases on a hot path: it
        pops an integer id from it as `release` would."""
        return self._waiting

    def allocate(self, waiter: T) -> int:
        ident = next(self._count)
        self._waiting[ident] = waiter
        return ident

    def release(self, ident: object) -> T | None:
        """Take the waiter for an id; None for an id we never gave or already answered."""
        if type(ident) is not int:
            return None
        return self._waiting.pop(ident, None)

    def items(self) -> list[tuple[int, T]]:
        return list(self._waiting.items())

    def drain(self) -> list[T]:
        """Take every waiter (the connection is gone)."""
        waiting = list(self._waiting.values())
        self._waiting.clear()
        return waiting

    def __len__(self) -> int:
        return len(self._waiting)
