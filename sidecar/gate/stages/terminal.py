"""The terminal stage: the call runs, upstream or here.

Reads `target` (run upstream, under that server's per-call deadline, the answer
redacted, both from the current snapshot of per-server facts) or `local` (a question
the sidecar answers: find_tool, a trio's search and describe, query_result). Always ends the call: completed with the result
bytes as they came (`msgspec.Raw`, not decoded), or failed with the error the route
raised (an upstream's own JSON-RPC error keeps its error object, redacted, for the wire).
"""

from __future__ import annotations

from collections.abc import Awaitable

from sidecar.errors import SidecarError
from sidecar.gate.call import ToolCall
from sidecar.gate.grants import Grant
from sidecar.gate.budget.query_meter import QueryLimits
from sidecar.gate.route import answer_locally, route_upstream
from sidecar.gate.stages.base import Current, Next
from sidecar.upstream import Pool

__all__ = ["RunCall"]


class RunCall:
    def __init__(self, current: Current, pool: Pool, grant: Grant, limits: QueryLimits) -> None:
        self.current = current
        self.pool = pool
        self.grant = grant
        self.limits = limits

    def __call__(self, call: ToolCall, call_next: Next) -> Awaitable[ToolCall]:
        """Plain, not a coroutine: an upstream call is the route's own coroutine (which ends
        the call whatever happens), so no frame of this stage waits on it."""
        if call.target is not None:  # the deadline and the secrets of the snapshot of the moment
            facts = self.current.live.facts
            return route_upstream(call, self.pool, facts.deadlines.get(call.target.alias), facts.answers)
        return self._locally(call)

    async def _locally(self, call: ToolCall) -> ToolCall:
        try:
            current = self.current
            return await answer_locally(call, current.catalog, current.listing, current.held, self.allowed,
                                        self.limits)
        except SidecarError as exc:
            return call.fail(exc)

    def allowed(self, exposed: str) -> bool:
        entry = self.current.catalog.tool(exposed)
        return entry is not None and self.grant.allows(entry.alias, entry.name)
