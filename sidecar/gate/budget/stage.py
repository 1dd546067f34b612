"""The budget stage: it charges whatever the terminal brought back (`Gate.run` calls `after`
once the chain returns when the terminal follows the charge at once; with stages between
them it wraps them, as a coroutine of its own).

Reads a completed call's `result` (nothing else: a failed call passes untouched). Under
every budget the result is not decoded or copied (`charge` = pass). Over budget it sets
`result` to what the model may see (`sidecar.gate.budget.charge`), `charge`, `bytes_in`,
`bytes_out` and, for a held JSON payload, `handle`. A shared held store writes the
payload before the call returns; when it cannot, the result becomes a clear tool error
(the payload is never shown whole). It never ends a call: the terminal did.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

from sidecar.catalog.facts import ServerFacts
from sidecar.config import Budgets
from sidecar.gate.budget.charge import charge_result
from sidecar.gate.call import ToolCall
from sidecar.gate.route import tool_error
from sidecar.gate.stages.base import Current, Next

__all__ = ["ChargeResult", "LARGE_RESULT"]

LARGE_RESULT = 1 << 20  # charged in a worker thread above this size


class ChargeResult:
    """The budgets are the current snapshot's (`Current.facts`), read per call: a server
    mounted after start is charged by its own `resultChars` like one mounted at start."""

    def __init__(self, current: Current, budgets: Budgets) -> None:
        self.current = current
        self.budgets = budgets

    @property
    def smallest(self) -> int:
        return self.current.facts.smallest_budget

    async def __call__(self, call: ToolCall, call_next: Next) -> ToolCall:
        """Around the terminal, as a stage of its own: the chain's shape when other stages
        sit between the charge and the terminal (a client span must see the charged result)."""
        await call_next(call)
        over = self.after(call)
        if over is not None:
            await over
        return call

    def mark(self, call: ToolCall, call_next: Next) -> Awaitable[ToolCall]:
        """The charge's place when the terminal follows it at once: the call is marked as
        reaching it and handed on (no frame of its own waits while the call is upstream);
        `Gate.run` charges it with `after` once the chain returns. Only a call that got this
        far is charged, as a wrapping stage would."""
        call.charge_due = True
        return call_next(call)

    def after(self, call: ToolCall) -> Awaitable[None] | None:
        """Charge what came back; None when that is done already (a failed call, or a
        result under every budget: untouched, undecoded, uncopied), else the awaitable of
        the charge over budget."""
        result = call.result
        if call.outcome != "completed" or result is None:
            return None
        return self.completed(call, len(result))

    def completed(self, call: ToolCall, size: int) -> Awaitable[None] | None:
        """`after` for a call known to be completed with a result of `size` bytes (a
        started call's end: `sidecar.gate.inline`, whose `Started.passing` reads the same
        bound before its answer goes)."""
        facts = self.current.live.facts
        if size <= facts.smallest_budget:
            call.charge, call.bytes_in, call.bytes_out = "pass", size, size
            return None
        return self._over_budget(call, facts)

    async def _over_budget(self, call: ToolCall, facts: ServerFacts) -> None:
        await self._charge(call, facts)
        if call.handle is not None:
            await self._settle(call)

    async def _charge(self, call: ToolCall, facts: ServerFacts) -> None:
        assert call.result is not None
        raw = bytes(call.result)
        alias = call.target.alias if call.target is not None else call.held_under
        budget = facts.budget_of(alias)
        held, session, name = self.current.held, call.session, call.ran

        def hold(payload: bytes) -> str:
            return held.hold(session, alias or "sidecar", name, payload)

        if len(raw) > LARGE_RESULT:
            charged = await asyncio.to_thread(charge_result, raw, budget, self.budgets.binary_bytes, hold)
        else:
            charged = charge_result(raw, budget, self.budgets.binary_bytes, hold)
        call.result, call.charge, call.handle = charged.result, charged.kind, charged.handle
        call.bytes_in, call.bytes_out = charged.bytes_in, charged.bytes_out

    async def _settle(self, call: ToolCall) -> None:
        """A shared store writes the held payload now; when it cannot, the model gets a
        clear error in place of the shape (the payload is never shown whole)."""
        from sidecar.gate.budget.store import StoreUnavailable

        assert call.handle is not None
        try:
            await self.current.held.settle(call.handle)
        except StoreUnavailable as exc:
            call.handle, call.charge = None, "store_down"
            call.result = tool_error(f"The result was too large to show and could not be held: {exc.message}")
            call.bytes_out = len(call.result)
