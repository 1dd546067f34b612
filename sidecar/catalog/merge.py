"""The catalog of a face: every upstream's tools and prompts, merged and named.

Pure functions over data the upstream pool hands in. Owns naming, order (upstreams in
configured order, each upstream's tools in the order it listed them), stripping of
invisible characters, the cap on one tool's size, and per-upstream sizes. Refuses
nothing: a tool without a usable name (none, or one whose text had to be repaired) or
with an invalid `x-mcp-header` annotation is skipped and counted; a tool over the size caps is cut and counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from sidecar.catalog.names import assign_names
from sidecar.catalog.sanitize import ToolCaps, cap_tool, might_hold_invisible, strip_invisible
from sidecar.wire.param_headers import ANNOTATION_BYTES, annotation_problem

__all__ = ["CatalogEntry", "Catalog", "ToolsEncoding", "UpstreamListing", "UpstreamSize", "build_catalog"]


_split_tools = msgspec.json.Decoder(list[msgspec.Raw]).decode


class ToolsEncoding(msgspec.Struct, frozen=True):
    """What the merge reads of a tools array's JSON (msgspec's encoding of it), kept
    instead of the bytes, which would stay in memory at rest (1.4 MB for 425 tools): the
    size of each item and of the whole, whether an `x-mcp-header` annotation or an
    invisible character might be in it, and a 256-bit BLAKE2b of it (the trust screen's
    "the same listing as last time")."""

    size: int
    item_sizes: tuple[int, ...]  # one per item; empty when the bytes could not be split
    annotated: bool
    invisible: bool
    digest: bytes

    @classmethod
    def of(cls, encoded: bytes) -> ToolsEncoding:
        import hashlib  # already loaded by the trust memo's keys; here off the early-answer path

        try:
            sizes = tuple(len(item) for item in _split_tools(encoded))
        except msgspec.DecodeError:
            sizes = ()
        return cls(len(encoded), sizes, ANNOTATION_BYTES in encoded, might_hold_invisible(encoded),
                   hashlib.blake2b(encoded, digest_size=32).digest())


class UpstreamListing(msgspec.Struct, frozen=True):
    """What one ready upstream offers, as decoded from its list answers."""

    alias: str
    tools: list[dict[str, Any]]
    prompts: list[dict[str, Any]] = []
    encoding: ToolsEncoding | None = None  # of `tools` as listed; None: every check reads the tools themselves


class CatalogEntry(msgspec.Struct, frozen=True):
    exposed: str  # the name the engine sees
    alias: str  # the upstream
    name: str  # the upstream's own name for it
    spec: dict[str, Any]  # the tool (or prompt) object as the engine sees it
    app_only: bool = False  # only an app may call it (`sidecar.catalog.apps`): judged once, at the merge


def app_only_spec(spec: dict[str, Any]) -> bool:
    """True when the tool's `_meta.ui.visibility` is a list without "model". A tool with no
    visibility (or none readable) is for the model and the app alike, as the MCP Apps
    extension says. Lives here so the merge judges it once per tool, not once per call."""
    meta = spec.get("_meta")
    ui = meta.get("ui") if isinstance(meta, dict) else None
    visibility = ui.get("visibility") if isinstance(ui, dict) else None
    return isinstance(visibility, list) and "model" not in visibility


class UpstreamSize(msgspec.Struct, frozen=True):
    tools: int
    description_chars: int
    cut_tools: int = 0  # tools whose description or schema was over the caps


class Catalog(msgspec.Struct, frozen=True):
    tools: tuple[CatalogEntry, ...]
    prompts: tuple[CatalogEntry, ...]
    by_tool: dict[str, CatalogEntry]
    by_prompt: dict[str, CatalogEntry]
    sizes: dict[str, UpstreamSize]
    stripped_chars: int
    skipped_tools: int

    def tool(self, exposed: str) -> CatalogEntry | None:
        return self.by_tool.get(exposed)


EMPTY_CATALOG = Catalog((), (), {}, {}, {}, 0, 0)


def _usable(items: Iterable[Any]) -> list[dict[str, Any]]:
    """Items with a name; a name holding U+FFFD was not valid text, and can never be called."""
    return [i for i in items if isinstance(i, dict) and isinstance(i.get("name"), str) and i["name"]
            and "\ufffd" not in i["name"]]


def _clean(listing: UpstreamListing) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    tools = _usable(listing.tools)
    encoding = listing.encoding
    if encoding is None or encoding.annotated:  # a server's header annotations
        tools = [t for t in tools if annotation_problem(t) is None]  # invalid: left out (SEP-2243)
    prompts = _usable(listing.prompts)
    stripped = 0
    if encoding is None or encoding.invisible:
        tools, stripped = strip_invisible(tools)
    prompts, prompt_stripped = strip_invisible(prompts)
    return tools, prompts, stripped + prompt_stripped


def _within_caps(listing: UpstreamListing, bound: int) -> set[int]:
    """The ids of the listing's tools whose whole encoding is at most `bound` bytes: no
    field of theirs can be over a cap. Read from the listing's `encoding` (the sidecar's
    own encoding of `tools`, one size per item) without encoding anything; empty without it."""
    sizes = listing.encoding.item_sizes if listing.encoding is not None else ()
    if len(sizes) != len(listing.tools):
        return set()
    return {id(tool) for tool, size in zip(listing.tools, sizes) if size <= bound}


def _capped(listing: UpstreamListing, tools: list[dict[str, Any]], caps: ToolCaps) -> tuple[list[dict[str, Any]], int]:
    """The tools within the size caps, and how many were cut. Only a tool that could be
    over a cap is measured (one encoding per field, the slow part of a merge)."""
    bound = min(caps.description_chars, caps.schema_bytes)
    if listing.encoding is not None and listing.encoding.size <= bound:
        return tools, 0  # the whole listing is smaller than one cap: nothing to measure
    small = _within_caps(listing, bound)
    capped = [(t, False) if id(t) in small else cap_tool(t, caps) for t in tools]
    return [t for t, _ in capped], sum(cut for _, cut in capped)


def _description_chars(tools: Sequence[dict[str, Any]]) -> int:
    return sum(len(d) for t in tools if isinstance(d := t.get("description"), str))


def _entries(
    items: Sequence[tuple[str, dict[str, Any]]], budget: int, reserved: Iterable[str], prefixed: bool
) -> tuple[CatalogEntry, ...]:
    names = assign_names([(alias, item["name"]) for alias, item in items], budget, reserved, prefixed)
    return tuple(
        CatalogEntry(exposed, alias, item["name"], {**item, "name": exposed}, app_only_spec(item))
        for exposed, (alias, item) in zip(names, items)
    )


def build_catalog(
    listings: Sequence[UpstreamListing],
    name_budget: int,
    reserved: Iterable[str] = (),
    prefixed: bool = True,
    caps: ToolCaps = ToolCaps(),
) -> Catalog:
    """Merge ready upstreams' listings into one named catalog."""
    tools: list[tuple[str, dict[str, Any]]] = []
    prompts: list[tuple[str, dict[str, Any]]] = []
    sizes: dict[str, UpstreamSize] = {}
    stripped = skipped = 0
    reserved = frozenset(reserved)
    for listing in listings:
        clean_tools, clean_prompts, count = _clean(listing)
        stripped += count
        skipped += len(listing.tools) - len(clean_tools)
        clean_tools, cut = _capped(listing, clean_tools, caps)
        sizes[listing.alias] = UpstreamSize(len(clean_tools), _description_chars(clean_tools), cut)
        tools.extend((listing.alias, t) for t in clean_tools)
        prompts.extend((listing.alias, p) for p in clean_prompts)
    tool_entries = _entries(tools, name_budget, reserved, prefixed)
    prompt_entries = _entries(prompts, name_budget, (), prefixed)
    return Catalog(
        tools=tool_entries,
        prompts=prompt_entries,
        by_tool={e.exposed: e for e in tool_entries},
        by_prompt={e.exposed: e for e in prompt_entries},
        sizes=sizes,
        stripped_chars=stripped,
        skipped_tools=skipped,
    )
