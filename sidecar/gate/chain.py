"""The gate: the single ordered path every tool call takes.

A stage is `async (call, call_next) -> ToolCall`; it ends a call by finishing the record
(completed or failed), never by raising. The chain today: resolve -> route (terminal).
Grants, policy, budget and record join here as stages of their own.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

from sidecar.catalog import Catalog
from sidecar.errors import INVALID_PARAMS, EngineInputError, SidecarError
from sidecar.gate.call import ToolCall
from sidecar.upstream import Pool, result_of

__all__ = ["Gate", "Stage", "Next"]

log = logging.getLogger(__name__)

Next = Callable[[ToolCall], Awaitable[ToolCall]]
Stage = Callable[[ToolCall, Next], Awaitable[ToolCall]]


def unknown_tool(name: str) -> EngineInputError:
    return EngineInputError(f"unknown tool '{name}' at params.name", code=INVALID_PARAMS)


async def _end_of_chain(call: ToolCall) -> ToolCall:
    return call


def compose(stages: Sequence[Stage]) -> Next:
    """Bind each stage to the next once, so a call costs no closure per stage."""
    following: Next = _end_of_chain
    for stage in reversed(stages):
        following = _bind(stage, following)
    return following


def _bind(stage: Stage, following: Next) -> Next:
    async def bound(call: ToolCall) -> ToolCall:
        return await stage(call, following)

    return bound


class Gate:
    """Runs calls through its stages; the catalog is swapped in as it changes."""

    def __init__(self, pool: Pool, catalog: Catalog) -> None:
        self.pool = pool
        self.catalog = catalog
        self._entry = compose((self.resolve, self.record, self.route))

    async def run(self, call: ToolCall) -> ToolCall:
        try:
            return await self._entry(call)
        except SidecarError as exc:  # a stage broke its promise; the call still ends once
            return call if call.outcome else call.fail(exc)

    async def resolve(self, call: ToolCall, call_next: Next) -> ToolCall:
        entry = self.catalog.tool(call.name)
        if entry is None:
            return call.fail(unknown_tool(call.name))
        call.target = entry
        return await call_next(call)

    async def record(self, call: ToolCall, call_next: Next) -> ToolCall:
        await call_next(call)
        if log.isEnabledFor(logging.DEBUG):
            target = call.target
            log.debug(
                "call %s -> %s/%s %s in %.1f ms",
                call.name, target.alias if target else "-", target.name if target else "-",
                call.outcome, call.seconds * 1000,
            )
        return call

    async def route(self, call: ToolCall, call_next: Next) -> ToolCall:
        """Terminal stage: the upstream request, with progress and cancellation relayed."""
        assert call.target is not None
        upstream = self.pool.get(call.target.alias)
        try:
            if upstream is None:
                raise unknown_tool(call.name)
            conn = upstream.ready_connection()
            params = {"name": call.target.name, "arguments": call.arguments}
            if call.meta:
                params["_meta"] = {k: v for k, v in call.meta.items() if k != "progressToken"}
            ident, answer = conn.start_request("tools/call", params, call.progress)
            if call.on_sent is not None:
                call.on_sent(conn, ident)
            try:
                frame = await answer
            finally:
                conn.forget(ident)
            return call.complete(result_of(frame))
        except SidecarError as exc:
            return call.fail(exc)
