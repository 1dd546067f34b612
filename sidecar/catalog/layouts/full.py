"""The full layout: every tool of the face, under its engine-visible name.

Also home of the layout seam's data types (`Listing`, `MetaTool`, `UpstreamTraits`),
which every layout module shares.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import msgspec

from sidecar.catalog.merge import Catalog
if TYPE_CHECKING:  # search loads only when a layout hides tools behind it
    from sidecar.catalog.search import SearchIndex

__all__ = ["Listing", "MetaTool", "UpstreamTraits", "full_layout"]

MetaKind = Literal["find_tool", "use_tool", "search_tools", "describe_tool", "call_tool"]


class UpstreamTraits(msgspec.Struct, frozen=True):
    """What a layout needs to know of an upstream beyond its tools."""

    alias: str
    transport: str = "stdio"  # "stdio" (a command) | "http" | "sse" (URL upstreams)
    builtin: bool = False
    always_listed: tuple[str, ...] = ()  # upstream's own tool names
    direct_only: tuple[str, ...] = ()  # upstream's own tool names


class MetaTool(msgspec.Struct, frozen=True):
    """A listed tool the sidecar answers itself, or resolves to a hidden catalog tool.

    `targets` maps every name the model may pass (for `use_tool`/`call_tool`) or ask about
    (for `describe_tool`) to the catalog entry's engine-visible name; find/search tools
    search those same entries, through `index` (built on the first query). Only the
    engine-visible name counts: an upstream's own name is never an alias (it could be
    another server's visible name).
    `directOnly` tools are in the targets of the call tools so that they can be refused
    by name ("call it directly") rather than reported unknown.
    """

    kind: MetaKind
    targets: dict[str, str]
    index: SearchIndex | None = None


class Listing(msgspec.Struct, frozen=True):
    """The tools the engine sees, in order, and what stands behind each meta-tool."""

    tools: tuple[dict[str, Any], ...]
    layout: str
    meta: dict[str, MetaTool] = {}
    direct_only: frozenset[str] = frozenset()  # engine-visible names refused through use_tool
    notes: tuple[str, ...] = ()  # what the face reports: upstreams behind search, count vs cap
    compact: frozenset[str] = frozenset()  # engine-visible names listed by signature, checked on call

    def page(self, offset: int, size: int) -> tuple[list[dict[str, Any]], int | None]:
        """Tools from `offset`, at most `size`, and the next offset (None at the end)."""
        end = offset + size
        following = end if end < len(self.tools) else None
        return list(self.tools[offset:end]), following


def full_layout(catalog: Catalog) -> Listing:
    return Listing(tuple(entry.spec for entry in catalog.tools), "full")
