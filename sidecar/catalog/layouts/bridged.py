"""The bridged layout: the built-in catalog's always-listed tools, plus `find_tool` and
`use_tool` in front of the rest.

Owns the two meta-tools' listed text (worded to stay true whether or not any given tool
is listed) and the split of the built-in upstreams' tools into listed and hidden.
Refuses nothing itself: `directOnly` tools are listed and put in `use_tool`'s targets only
so that a call naming them can be refused with "call it directly".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sidecar.catalog.layouts.full import MetaTool, UpstreamTraits
from sidecar.catalog.layouts.parts import Part, name_targets, schema
from sidecar.catalog.merge import CatalogEntry

__all__ = ["FIND_TOOL", "USE_TOOL", "bridge_part", "find_tool_spec", "use_tool_spec"]

FIND_TOOL = "find_tool"
USE_TOOL = "use_tool"
QUERY_HINT = "The action and the object, in English, plus any id or value you have, e.g. 'resize volume vol-0a1b'."


def find_tool_spec() -> dict[str, Any]:
    return {
        "name": FIND_TOOL,
        "description": (
            "Look up this server's other tools, to run with use_tool. Use it when no tool in your "
            "list fits the task. Answers the best three matches in full (name, description, input "
            "schema), the next seven under 'more', one line each, and further names under 'names': look "
            "at those lists before searching again, and search a tool's exact name to see it whole. When nothing fits "
            "well the answer says so (match: weak) and lists the server's areas."
        ),
        "inputSchema": schema(
            {"query": {"type": "string", "description": QUERY_HINT}},
            ["query"],
        ),
        "annotations": {"readOnlyHint": True},
    }


def use_tool_spec() -> dict[str, Any]:
    return {
        "name": USE_TOOL,
        "description": (
            "Run one of this server's tools by name, with its arguments, exactly as if it were "
            "called directly: the same checks, limits and result. Use it for a tool that find_tool "
            "returned. A tool that is in your tool list can be called by its own name, and some "
            "(those that send something) must be."
        ),
        "inputSchema": schema(
            {
                "name": {"type": "string", "description": "The tool's name, as find_tool gave it."},
                "arguments": {"type": "object", "description": "The tool's arguments, matching its input schema."},
            },
            ["name"],
        ),
    }


def _listed_names(traits: UpstreamTraits) -> frozenset[str]:
    return frozenset(traits.always_listed) | frozenset(traits.direct_only)


def bridge_part(entries: Sequence[CatalogEntry], traits: Mapping[str, UpstreamTraits]) -> Part:
    """The built-in upstreams' tools, bridged: listed ones first-class, the rest behind
    `find_tool`/`use_tool` (which are left out when nothing is hidden)."""
    listed: list[CatalogEntry] = []
    hidden: list[CatalogEntry] = []
    direct: list[CatalogEntry] = []
    for entry in entries:
        own = traits.get(entry.alias, UpstreamTraits(entry.alias))
        (listed if entry.name in _listed_names(own) else hidden).append(entry)
        if entry.name in own.direct_only:
            direct.append(entry)
    aliases = tuple(dict.fromkeys(e.alias for e in entries))
    tools = tuple(e.spec for e in listed)
    if not hidden:
        return Part(aliases, tools, tuple(entries), direct=tuple(direct), builtin=True)
    from sidecar.catalog.search import SearchIndex  # loaded only when tools are hidden

    meta = {
        FIND_TOOL: MetaTool("find_tool", name_targets(hidden), SearchIndex(hidden)),
        USE_TOOL: MetaTool("use_tool", name_targets([*hidden, *listed])),
    }
    note = f"bridged: {len(hidden)} of {len(entries)} tools of {', '.join(aliases)} behind {FIND_TOOL}/{USE_TOOL}"
    return Part(aliases, (*tools, find_tool_spec(), use_tool_spec()), tuple(entries), meta, tuple(direct),
                builtin=True, notes=(note,))
