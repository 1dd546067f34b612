"""The ToolCall record: one per `tools/call`, from request to outcome.

Every call ends in exactly one of `completed` or `failed` (a cancelled call is failed
with kind `cancelled`); `finish` refuses a second ending.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal

import msgspec

from sidecar.catalog import CatalogEntry
from sidecar.errors import SidecarError

__all__ = ["ToolCall", "Outcome"]

Outcome = Literal["completed", "failed"]


class ToolCall(msgspec.Struct, kw_only=True):
    """Request, target, decisions, result, error and timings of one tool call."""

    name: str  # as the engine called it
    arguments: dict[str, Any]
    meta: dict[str, Any] | None = None
    target: CatalogEntry | None = None
    decisions: list[tuple[str, str]] = []  # (stage, what it decided)
    result: msgspec.Raw | None = None
    error: SidecarError | None = None
    outcome: Outcome | None = None
    started: float = msgspec.field(default_factory=time.perf_counter)
    ended: float | None = None
    progress: Callable[[dict[str, Any]], None] | None = None
    on_sent: Callable[[Any, int], None] | None = None  # (connection, upstream id)

    def complete(self, result: msgspec.Raw) -> ToolCall:
        self.result = result
        return self._finish("completed")

    def fail(self, error: SidecarError) -> ToolCall:
        self.error = error
        return self._finish("failed")

    def _finish(self, outcome: Outcome) -> ToolCall:
        if self.outcome is not None:
            raise RuntimeError(f"tool call {self.name!r} already {self.outcome}")
        self.outcome = outcome
        self.ended = time.perf_counter()
        return self

    @property
    def seconds(self) -> float:
        return (self.ended or time.perf_counter()) - self.started
