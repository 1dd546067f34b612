"""`build_listing`: a catalog, the upstreams' traits and a plan in; the `Listing` out.

Owns the composition of the layouts: each upstream becomes one part (bridged with the
other built-ins, a trio when what the catalog holds of it is big and its transport is in
the plan, else whole),
then the parts are listed in catalog order, or packed under the cap, and last, when the
plan says compact, every catalog tool listed whole is listed by its signature. Owns the names of
the meta-tools too: the fixed ones (`find_tool`, `use_tool`, the shared trio) are
reserved by the face when it builds the catalog; a per-upstream trio's names are checked
against every catalog name and shortened or given a digest as tool names are. No I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from sidecar.catalog.apps import model_catalog
from sidecar.catalog.layouts.bridged import FIND_TOOL, USE_TOOL, bridge_part
from sidecar.catalog.layouts.choose import LayoutPlan
from sidecar.catalog.layouts.full import Listing, UpstreamTraits
from sidecar.catalog.layouts.parts import Part, whole_part
from sidecar.catalog.layouts.trio import SHARED_TRIO, TrioNames, is_big, trio_part
from sidecar.catalog.merge import Catalog, CatalogEntry, UpstreamSize
from sidecar.catalog.names import assign_names

__all__ = ["META_NAMES", "build_listing"]

# Names the face must reserve when it builds the catalog (with its own `query_result`).
META_NAMES = frozenset({FIND_TOOL, USE_TOOL, *SHARED_TRIO})
_TRIO_SUFFIXES = ("search_tools", "describe_tool", "call_tool")


def _groups(catalog: Catalog) -> dict[str, list[CatalogEntry]]:
    groups: dict[str, list[CatalogEntry]] = {}
    for entry in catalog.tools:
        groups.setdefault(entry.alias, []).append(entry)
    return groups


def _size(entries: Sequence[CatalogEntry]) -> UpstreamSize:
    """What this catalog holds of an upstream (a bot's grants may have left out some)."""
    chars = sum(len(d) for e in entries if isinstance(d := e.spec.get("description"), str))
    return UpstreamSize(len(entries), chars)


def _free_names(wanted: Sequence[tuple[str, str]], budget: int, taken: set[str], prefixed: bool) -> list[str]:
    names = assign_names(wanted, budget, taken, prefixed)
    taken.update(names)
    return names


def _trio_names(alias: str, budget: int, taken: set[str]) -> TrioNames:
    search, describe, call = _free_names([(alias, s) for s in _TRIO_SUFFIXES], budget, taken, True)
    return search, describe, call


def _parts(catalog: Catalog, traits: Mapping[str, UpstreamTraits], plan: LayoutPlan, taken: set[str]) -> list[Part]:
    groups = _groups(catalog)
    builtin = [e for alias, group in groups.items() if traits[alias].builtin for e in group]
    parts: list[Part] = []
    for alias, entries in groups.items():
        own = traits[alias]
        direct = [e for e in entries if e.name in own.direct_only]
        if plan.bridged and own.builtin:
            if entries[0] is builtin[0]:  # the bridge stands where the first built-in does
                parts.append(bridge_part(builtin, traits))
        elif own.transport in plan.trio and is_big(size := _size(entries)):
            names = _trio_names(alias, plan.name_budget, taken)
            parts.append(trio_part(alias, entries, direct, size, names))
        else:
            parts.append(whole_part(entries, own.builtin, direct))
    return parts


class _Traits(dict[str, UpstreamTraits]):
    """Traits by alias; an upstream nobody described is a plain command upstream."""

    def __missing__(self, alias: str) -> UpstreamTraits:
        return UpstreamTraits(alias)


def build_listing(
    catalog: Catalog,
    traits: Iterable[UpstreamTraits],
    plan: LayoutPlan,
    face_tools: Sequence[dict[str, Any]] = (),
) -> Listing:
    """The tools the engine sees under `plan`, and what stands behind each meta-tool.

    `face_tools` are tools the face lists itself (e.g. `query_result`): listed first, and
    counted toward the cap. The catalog must have been built with `META_NAMES` (and those
    tools' names) reserved.
    """
    by_alias = _Traits({t.alias: t for t in traits})
    taken = set(catalog.by_tool) | META_NAMES | {str(t.get("name")) for t in face_tools}
    catalog = model_catalog(catalog)  # app-only tools: in no layout, behind no search (MCP Apps)
    parts = _parts(catalog, by_alias, plan, taken)
    direct_only = frozenset(e.exposed for p in parts for e in p.direct)
    part_notes = [n for p in parts for n in p.notes]
    if plan.cap is None:
        tools = (*face_tools, *(t for p in parts for t in p.tools))
        meta = {k: v for p in parts for k, v in p.meta.items()}
        listing = Listing(tools, plan.name, meta, direct_only, tuple(part_notes))
    else:
        from sidecar.catalog.layouts.cap import cap_warnings, fit_to_cap  # only a plan with a cap: off the start path

        packed = fit_to_cap(parts, face_tools, plan.cap, SHARED_TRIO)
        notes = (*part_notes, *packed.notes, *cap_warnings(catalog.sizes, plan.cap))
        listing = Listing(packed.tools, plan.name, packed.meta, direct_only, notes)
    return _compacted(listing, catalog) if plan.compact else listing


def _compacted(listing: Listing, catalog: Catalog) -> Listing:
    """Every catalog tool the listing shows whole, by description and signature instead
    (the face's own tools and the meta-tools stay as they are)."""
    from sidecar.catalog.layouts.compact import compact_spec  # only a compact plan: off the start path

    catalog_specs = {id(e.spec): e.exposed for e in catalog.tools}
    tools = tuple(compact_spec(t) if id(t) in catalog_specs else t for t in listing.tools)
    compact = frozenset(catalog_specs[id(t)] for t in listing.tools if id(t) in catalog_specs)
    return msgspec.structs.replace(listing, tools=tools, compact=compact)
