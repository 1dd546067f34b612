"""The ToolCall record: one per `tools/call`, from request to outcome.

Every call ends in exactly one of `completed` or `failed`; `complete`/`fail` refuse a
second ending (a stage that tries is a bug: it raises). The chain (`Gate.run`) makes
sure every call ends and overrules an ending a broken stage left behind. The record
carries what the audit line and the debug log need: the tool that really ran (never
`use_tool` or a trio's call tool), each stage's decision, sizes, whether the result was
held, timings and the kind of error.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal

import msgspec

from sidecar.catalog import CatalogEntry
from sidecar.errors import SidecarError

__all__ = ["ToolCall", "Outcome", "LocalKind", "StageFault"]

Outcome = Literal["completed", "failed"]
LocalKind = Literal["find_tool", "search_tools", "describe_tool", "query_result"]


class StageFault(SidecarError):
    """A stage raised what no stage expected (a bug): the call fails with it, and the
    engine gets the same internal error any unexpected exception gets (`cause`)."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(f"tools/call failed: an unexpected {type(cause).__name__} inside the sidecar")
        self.cause = cause


class ToolCall(msgspec.Struct, kw_only=True):
    name: str  # as the engine called it
    arguments: dict[str, Any]
    meta: dict[str, Any] | None = None
    task: dict[str, Any] | None = None  # `params.task`: run upstream as a task (MCP 2025-11-25)
    session: object = None  # held results are bound to it
    via: str | None = None  # the meta-tool that named the target, if any
    asked_for: str = ""  # the tool name the model asked for (direct or through a meta-tool)
    target: CatalogEntry | None = None  # a catalog tool to run upstream
    local: LocalKind | None = None  # or a question the sidecar answers itself
    decisions: list[tuple[str, str, str]] = []  # (stage, action, reason)
    rule: str = ""  # the policy rule that matched: `#index label`
    result: msgspec.Raw | None = None
    error: SidecarError | None = None
    outcome: Outcome | None = None
    charge: str = ""  # what the budget did: pass, cut, shaped, binary, too_big
    bytes_in: int = 0
    bytes_out: int = 0
    handle: str | None = None
    held_under: str = ""  # the upstream a result is held for (a query's answer: its source's)
    started: float = msgspec.field(default_factory=time.perf_counter)
    ended: float | None = None
    progress: Callable[[dict[str, Any]], None] | None = None
    on_sent: Callable[[Any, int], None] | None = None  # (connection, upstream id)
    confirmer: Any = None  # how the person can be asked (a `sidecar.gate.confirmation.stage.Confirmer`), set by the front
    ask_engine: Any = None  # how a 2026-07-28 server's questions reach the engine (`sidecar.gate.asked`), by the front
    relay: Any = None  # or, for a 2026-07-28 engine, how they are relayed to it (`sidecar.front.eras.relayed`)
    answers: dict[str, Any] | None = None  # a relayed round's `inputResponses`, for the server
    upstream_state: str | None = None  # a relayed round's server state, opened from the engine's
    charge_due: bool = False  # reached the charge's place right before the terminal: `Gate.run` charges it

    def complete(self, result: msgspec.Raw) -> ToolCall:
        if self.outcome is not None:  # `_finish`, inline: every call that completes comes this way
            raise RuntimeError(f"tool call {self.name!r} already {self.outcome}")
        self.result, self.outcome, self.ended = result, "completed", time.perf_counter()
        return self

    def fail(self, error: SidecarError) -> ToolCall:
        self.error = error
        return self._finish("failed")

    def overrule(self, fault: StageFault) -> ToolCall:
        """A stage broke after the call had ended: what it left cannot be trusted (a
        result perhaps not charged), so the call is failed with the fault instead. Only
        the chain does this, once; the ending's time stays."""
        assert self.outcome is not None, "a call that has not ended is failed, not overruled"
        self.result, self.error, self.outcome = None, fault, "failed"
        return self

    def decide(self, stage: str, action: str, reason: str = "") -> None:
        self.decisions.append((stage, action, reason))

    def _finish(self, outcome: Outcome) -> ToolCall:
        if self.outcome is not None:
            raise RuntimeError(f"tool call {self.name!r} already {self.outcome}")
        self.outcome = outcome
        self.ended = time.perf_counter()
        return self

    @property
    def seconds(self) -> float:
        return (self.ended or time.perf_counter()) - self.started

    @property
    def ran(self) -> str:
        """The tool that really ran: `alias__tool`, a local answer, or '-'."""
        if self.target is not None:
            return f"{self.target.alias}__{self.target.name}"
        return self.local or "-"
