"""The cap: at most `cap` tools listed, and no upstream dropped for it.

Owns the packing: the face's own tools, then the built-ins, then whole upstreams (each as
the part its layout made: listed whole, bridged, or its trio) in configured order while
they fit; once one does not, it and every later one go behind one shared trio
(`mcp_search_tools`, `mcp_describe_tool`, `mcp_call_tool`), which counts toward the cap.
`directOnly` tools of upstreams behind the search stay listed. Also owns the notes the
face reports: the count against the cap, the upstreams behind the search, and a warning
for an upstream that alone has at least the cap, or half of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from sidecar.catalog.layouts.full import MetaTool
from sidecar.catalog.layouts.parts import Part
from sidecar.catalog.layouts.trio import TrioNames, shared_trio_part
from sidecar.catalog.merge import CatalogEntry, UpstreamSize

__all__ = ["Packed", "fit_to_cap", "cap_warnings"]

_TRIO = 3


class Packed(msgspec.Struct, frozen=True):
    tools: tuple[dict[str, Any], ...]
    meta: dict[str, MetaTool]
    notes: tuple[str, ...]
    behind: tuple[str, ...]  # aliases reached through the shared trio


def cap_warnings(sizes: Mapping[str, UpstreamSize], cap: int) -> list[str]:
    found = []
    for alias, size in sizes.items():
        if size.tools >= cap:
            found.append(f"warning: '{alias}' alone has {size.tools} tools, at least the cap of {cap}")
        elif 2 * size.tools >= cap:
            found.append(f"warning: '{alias}' alone has {size.tools} tools, at least half the cap of {cap}")
    return found


def _split(parts: Sequence[Part], room: int) -> tuple[list[Part], list[Part]]:
    """The leading parts that fit in `room`, and the rest from the first that does not.
    A part's `directOnly` tools are not counted: their room is kept for them beforehand."""
    for position, part in enumerate(parts):
        cost = part.size - len(part.direct)
        if cost > room:
            return list(parts[:position]), list(parts[position:])
        room -= cost
    return list(parts), []


def fit_to_cap(
    parts: Sequence[Part], face_tools: Sequence[dict[str, Any]], cap: int, names: TrioNames
) -> Packed:
    ordered = [p for p in parts if p.builtin] + [p for p in parts if not p.builtin]
    total = len(face_tools) + sum(p.size for p in ordered)
    if total <= cap:
        tools = (*face_tools, *(t for p in ordered for t in p.tools))
        meta = {k: v for p in ordered for k, v in p.meta.items()}
        return Packed(tools, meta, (f"cap: {len(tools)} of at most {cap} tools listed",), ())
    own = list(face_tools[: max(cap - _TRIO, 0)])
    room = cap - _TRIO - len(own)
    every_direct = sum(len(p.direct) for p in ordered)
    listed, behind = _split(ordered, room - every_direct)
    direct = [e for p in behind for e in p.direct]
    kept_direct = direct[: max(room - sum(p.size for p in listed), 0)]
    shared = shared_trio_part(_grouped(behind), direct, cap, names)
    tools = (*own, *(t for p in listed for t in p.tools), *(e.spec for e in kept_direct), *shared.tools)
    meta = {k: v for p in listed for k, v in p.meta.items()} | dict(shared.meta)
    aliases = tuple(a for p in behind for a in p.aliases)
    notes = [f"cap: {len(tools)} of at most {cap} tools listed", f"behind {names[0]}: {', '.join(aliases)}"]
    if len(kept_direct) < len(direct):
        notes.append(f"warning: {len(direct) - len(kept_direct)} directOnly tools could not be listed under the cap")
    return Packed(tools, meta, tuple(notes), aliases)


def _grouped(parts: Sequence[Part]) -> list[tuple[str, list[CatalogEntry]]]:
    groups: dict[str, list[CatalogEntry]] = {}
    for part in parts:
        for entry in part.entries:
            groups.setdefault(entry.alias, []).append(entry)
    return list(groups.items())
