"""The meter of one `query_result`: what a query may spend, and the measures it is charged by.

Owns the three budgets a query draws on (steps, new bytes, the clock), the logical size
of a value (what encoding it would produce, counting a shared part every time it
appears, so `[@,@]` nested 60 times is seen as the 2^60 copies the encoder would write),
and the long operations done in slices so the clock is read between them. Refuses, with
a QueryError naming the limit, as soon as one budget is spent.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from typing import Any

import msgspec

__all__ = ["CLOCK_EVERY", "Meter", "QueryError", "QueryLimits", "list_cost", "dict_cost", "sorted_in_slices"]

CLOCK_EVERY = 4096  # nodes a measure walks between two looks at the clock
SORT_SLICE = 32_768  # items sorted in one go (a C call, no look at the clock inside)
_MB = 1 << 20


class QueryError(Exception):
    """The query was refused or stopped; the message is fit for the model."""


class QueryLimits(msgspec.Struct, frozen=True):
    seconds: float = 5.0
    depth: int = 40
    visits: int = 5_000_000
    length: int = 4096  # characters of the expression
    new_bytes: int = 32 * _MB  # new values a query may make, plus twice the held payload
    answer_bytes: int = 4 * _MB  # the answer, any one string made, or the held payload's size if larger


def list_cost(items: int) -> int:
    return 56 + 8 * items


def dict_cost(entries: int) -> int:
    return 64 + 48 * entries


def _mb(size: int) -> str:
    return f"{size / _MB:,.0f} MB" if size >= _MB else f"{size:,} bytes"


class Meter:
    """Steps, bytes and time left to one query; every charge may raise QueryError."""

    def __init__(self, limits: QueryLimits, payload_bytes: int) -> None:
        self.limits = limits
        self.deadline = time.monotonic() + limits.seconds
        self.steps_left = limits.visits
        self.bytes_allowed = limits.new_bytes + 2 * payload_bytes
        self.bytes_left = self.bytes_allowed
        self.answer_cap = max(limits.answer_bytes, payload_bytes)

    def check_clock(self) -> None:
        if time.monotonic() > self.deadline:
            raise QueryError(f"the query ran longer than {self.limits.seconds:g}s; narrow it")

    def step(self, count: int = 1) -> None:
        self.steps_left -= count
        if self.steps_left < 0:
            raise QueryError(f"the query does more than {self.limits.visits:,} steps; narrow it")
        self.check_clock()

    def spend(self, size: int) -> None:
        """Charge `size` bytes of new values (before making them, where that is possible)."""
        self.bytes_left -= size
        if self.bytes_left < 0:
            raise QueryError(f"the query makes more than {_mb(self.bytes_allowed)} of new values; narrow it")

    def measure(self, value: Any, cap: int) -> int:
        """The logical encoded size of `value` (about its JSON length), walking at most
        until it passes `cap`; the result is then some number above `cap`."""
        total = 0
        walked = 0
        stack = [value]
        while stack:
            item = stack.pop()
            kind = type(item)
            if kind is str:
                total += len(item) + 2
            elif kind is list:
                total += len(item) + 1
                if total <= cap:
                    stack.extend(item)
            elif kind is dict:
                total += 4 * len(item) + 1 + sum(map(len, item))
                if total <= cap:
                    stack.extend(item.values())
            else:
                total += 8
            if total > cap:
                return total
            walked += 1
            if walked % CLOCK_EVERY == 0:
                self.check_clock()
        return total

    def bounded(self, value: Any, cap: int, what: str) -> int:
        """The logical size of `value`; QueryError when it is over `cap`."""
        size = self.measure(value, cap)
        if size > cap:
            raise QueryError(f"{what} would be more than {_mb(cap)}; narrow the query")
        return size


def sorted_in_slices(items: list[Any], key: Callable[[Any], Any] | None, meter: Meter) -> list[Any]:
    """`sorted(items, key=key)`, stable, in slices of SORT_SLICE with the clock read between."""
    if len(items) <= SORT_SLICE:
        return sorted(items, key=key)
    runs = []
    for start in range(0, len(items), SORT_SLICE):
        runs.append(sorted(items[start:start + SORT_SLICE], key=key))
        meter.check_clock()
    merged: list[Any] = []
    for count, item in enumerate(heapq.merge(*runs, key=key), 1):
        merged.append(item)
        if count % CLOCK_EVERY == 0:
            meter.check_clock()
    return merged
