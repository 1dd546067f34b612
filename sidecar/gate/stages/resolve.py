"""The resolve stage: which tool a call really names.

Reads `call.name` and `call.arguments`. Sets `asked_for`, and one of `target` (a catalog
tool to run upstream) or `local` (a question the sidecar answers); through a meta-tool
(`use_tool`, a trio's call tool) it also sets `via` and replaces `arguments` with the
inner ones. Ends the call when nothing by that name may run: a held tool the bot may
use is answered with how to review it, a server waiting for a sign-in says so, a refused
meta-call says why (tool errors, completed), and every other name fails as one unknown
tool, so the model cannot probe for hidden ones. An app-only tool (MCP Apps,
`sidecar.catalog.apps`) is such a name unless the request carries the app marker, which
is taken off `meta` here whatever the call names.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from sidecar.catalog import CatalogEntry
from sidecar.catalog.apps import APP_MARKER, runs_for, take_app_marker
from sidecar.errors import SignInNeeded
from sidecar.gate.call import ToolCall
from sidecar.gate.grants import Grant
from sidecar.gate.route import tool_error, unknown_tool
from sidecar.gate.stages.base import Current, Next
from sidecar.trust.screen import Trust
from sidecar.upstream import Pool

if TYPE_CHECKING:
    from sidecar.catalog import LiveCatalog

__all__ = ["QUERY_RESULT", "Resolve"]

QUERY_RESULT = "query_result"
_META_CALLS = ("use_tool", "call_tool")


class Resolve:
    def __init__(self, current: Current, pool: Pool, trust: Trust, grant: Grant) -> None:
        self.current = current
        self.pool = pool
        self.trust = trust
        self.grant = grant

    def __call__(self, call: ToolCall, call_next: Next) -> Awaitable[ToolCall]:
        """Plain, not a coroutine: a call to a listed tool hands on the next stage's own
        awaitable, so no frame of this stage waits while the call is upstream."""
        name = call.asked_for = call.name
        from_app = False
        if call.meta and APP_MARKER in call.meta:  # the marker is the sidecar's: never sent on
            call.meta, from_app = take_app_marker(call.meta)
        if name == QUERY_RESULT:
            call.local = "query_result"
            return call_next(call)
        live = self.current.live  # read once: the catalog beside its own listing
        meta = live.listing.meta.get(name)
        if meta is None:
            entry = live.catalog.by_tool.get(name)
            if entry is None:
                return self._direct_after_first_start(call, call_next, from_app)
            if entry.app_only and not from_app or entry.exposed in live.listing.compact:
                return self._direct(call, call_next, entry, from_app)  # refused, or told its schema
            call.target = entry  # the common call: a listed tool, run as it is
            return call_next(call)
        if meta.kind not in _META_CALLS:
            call.local = meta.kind  # type: ignore[assignment]
            return call_next(call)
        return self._resolve_through(call, call_next)

    @staticmethod
    def plain_entry(live: LiveCatalog, name: str) -> CatalogEntry | None:
        """The tool a plain call named `name` runs as it is, when it is one: a listed tool,
        neither app-only nor compactly listed, of a server with no call deadline (what
        `__call__` would resolve it to, with no further step). Kept in `live.plain` for the
        next call of the name, until the catalog's next swap. None for every other name,
        with nothing decided: `__call__` takes it from the start."""
        if name == QUERY_RESULT or name in live.listing.meta:
            return None
        entry = live.catalog.by_tool.get(name)
        if entry is None or entry.app_only or entry.exposed in live.listing.compact \
                or live.facts.deadlines.get(entry.alias) is not None:
            return None
        live.plain[name] = entry  # a catalog entry: the table never holds more than the catalog
        return entry

    def _direct(self, call: ToolCall, call_next: Next, entry: CatalogEntry | None,
                from_app: bool) -> Awaitable[ToolCall]:
        """A call naming a tool directly (`entry`: the catalog's, None when there is none)."""
        if entry is None or not runs_for(entry, from_app):  # an app-only tool: as unknown to a model
            return _ended(self._held_or_unknown(call, call.name))
        call.target = entry
        misfit = self._compact_misfit(call, entry)
        if misfit:  # listed by signature only: the model gets the real schema to retry
            call.decide("resolve", "refuse", misfit)
            return _ended(call.complete(tool_error(misfit)))
        return call_next(call)

    async def _direct_after_first_start(self, call: ToolCall, call_next: Next, from_app: bool) -> ToolCall:
        return await self._direct(call, call_next, await self._after_first_start(call.name), from_app)

    def _compact_misfit(self, call: ToolCall, entry: CatalogEntry) -> str | None:
        if entry.exposed not in self.current.listing.compact:
            return None
        from sidecar.catalog.layouts.compact import misfit_answer

        return misfit_answer(entry.exposed, entry.spec, call.arguments)

    async def _after_first_start(self, name: str) -> CatalogEntry | None:
        """A name of an upstream still on its first start: wait for it, then look again."""
        alias = name.split("__", 1)[0]
        if "__" not in name or not self.pool.starting(alias):
            return None
        await self.pool.wait_first_start(alias)
        return self.current.catalog.tool(name)

    async def _resolve_through(self, call: ToolCall, call_next: Next) -> ToolCall:
        from sidecar.catalog.answers import resolve_meta_call

        listing, catalog = self.current.listing, self.current.catalog
        asked = call.arguments.get("name")
        call.via, call.asked_for = call.name, asked if isinstance(asked, str) else ""
        resolved = resolve_meta_call(listing, call.name, call.arguments)
        meta = listing.meta[call.name]
        exposed = meta.targets.get(call.asked_for)
        if exposed is None or catalog.tool(exposed) is None:
            return self._held_or_unknown(call, call.asked_for, call.name)
        if isinstance(resolved, str):
            call.decide("resolve", "refuse", resolved)
            return call.complete(tool_error(resolved))
        target_name, inner = resolved
        call.target = catalog.tool(target_name)
        if call.target is None:
            return call.fail(unknown_tool(call.asked_for))
        call.arguments = inner
        return await call_next(call)

    def _held_or_unknown(self, call: ToolCall, name: str, via: str = "") -> ToolCall:
        """A held tool the bot may use is answered with how to review it; else unknown.
        Through an upstream's own `<alias>__call_tool`, its own tool names count too."""
        alias = via[: -len("__call_tool")] if via.endswith("__call_tool") else ""
        held_as = next((n for n in (name, f"{alias}__{name}" if alias else "") if self.trust.held_target(n)), name)
        held = self.trust.held_target(held_as)
        if held is not None and self.grant.allows(*held):
            words = self.trust.held_answer(held_as) or ""
            call.decide("trust", "hold", words)
            return call.complete(tool_error(words))
        signin = self._needs_sign_in(name)
        if signin:
            call.decide("resolve", "refuse", signin)
            return call.complete(tool_error(signin))
        return call.fail(unknown_tool(name))

    def _needs_sign_in(self, name: str) -> str:
        """Words for a call to a tool of a server that left the list to wait for a sign-in:
        the server by its alias prefix, only when the bot may use that server at all."""
        alias = name.partition("__")[0]
        upstream = self.pool.upstreams.get(alias) if "__" in name else None
        if upstream is None or upstream.state != "needs-sign-in":
            return ""
        if self.grant.servers is not None and alias not in self.grant.servers:
            return ""
        return f"{SignInNeeded.label}: upstream '{alias}' needs sign-in: a person runs `omb-sidecar signin {alias}`"


async def _ended(call: ToolCall) -> ToolCall:
    """An awaitable of a call this stage ended itself (refused, unknown, held)."""
    return call
