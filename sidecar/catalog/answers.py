"""What the sidecar answers itself for a meta-tool, and what a run-by-name call resolves to.

`answer_meta` answers `find_tool`, a trio's search tool and a trio's describe tool with an
MCP `CallToolResult`, showing only tools the bot may see (`allowed`, by engine-visible
name). Every search tool answers in one shape (`search.shown`, within its byte budget): the
best three in full under `tools`, the next seven by one line under `more`, further names
alone under `names`, and a verdict:
`match: "good"`, or `match: "weak"` with a hint on how to ask again and the area summary.
A query that is exactly one tool's name answers that tool whole. `resolve_meta_call` turns a `use_tool` or trio call into the engine-visible name of
the tool it runs and that tool's own arguments, or says in words why it cannot: the gate
then runs that tool down exactly the path a direct call takes. Refuses: `directOnly`
tools ("call it directly"), names it does not know, arguments of the wrong shape.
A tool the bot may not see is reported exactly as an unknown one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from sidecar.catalog.layouts.full import Listing, MetaTool
from sidecar.catalog.layouts.trio import areas
from sidecar.catalog.merge import Catalog, CatalogEntry

from sidecar.catalog.layouts.shown import IN_VIEW, Shown, fit_answer

if TYPE_CHECKING:  # the index comes built with the listing: search loads only when one is
    from sidecar.catalog.search.index import Ranked, SearchIndex

__all__ = ["answer_meta", "resolve_meta_call", "unknown_tool_text", "GOOD_NOTE", "WEAK_NOTE"]

NAMES_SHOWN = 200  # a query that finds nothing lists at most this many names
AREAS_SHOWN = 1200  # characters of area summary in a weak answer
GOOD_NOTE = ("These fit the request. The best three are shown whole; look at the short list under "
             "'more' and the further names under 'names' before searching again (a query that is "
             "exactly one tool's name shows that tool whole).")
WEAK_NOTE = ("None of these fits the request well: they are only the closest. Look at the short list "
             "under 'more', the further names under 'names' and the server's areas before searching again.")
RETRY_HINT = ("Ask again with the action and the object in English (e.g. 'delete snapshot'), "
              "plus any id or value you have; the areas and the closest names below may help.")

Result = dict[str, Any]
Allowed = Callable[[str], bool]


def unknown_tool_text(name: object) -> str:
    """The one refusal for a name that is not there, or not there for this bot."""
    return f"unknown tool '{name}' at params.arguments.name"


def _result(payload: dict[str, Any], text: str | None = None) -> Result:
    body = text if text is not None else msgspec.json.encode(payload).decode()
    return {"content": [{"type": "text", "text": body}], "structuredContent": payload}


def _error(text: str) -> Result:
    return {"content": [{"type": "text", "text": text}], "isError": True}


def _text_argument(arguments: Mapping[str, Any], key: str) -> str | None:
    value = arguments.get(key)
    return value if isinstance(value, str) and value.strip() else None


def _found(entry: CatalogEntry) -> dict[str, Any]:
    spec = entry.spec
    return {"name": entry.exposed, "description": spec.get("description", ""),
            "inputSchema": spec.get("inputSchema", {"type": "object"})}


def _areas(index: SearchIndex) -> str:
    """What the searched tools cover, area by area (worked out once per index)."""
    if index.summary is None:
        index.summary = areas(index.entries, AREAS_SHOWN)
    return index.summary


def _nothing_found(index: SearchIndex, query: str, allowed: Allowed) -> Result:
    names = [e.exposed for e in index.entries if allowed(e.exposed)]
    shown = names[:NAMES_SHOWN]
    more = f" (and {len(names) - len(shown)} more)" if len(shown) < len(names) else ""
    text = (
        f"No tool matches {query[:200]!r}. {RETRY_HINT} "
        f"The tools you can look up are: {', '.join(shown) or 'none'}{more}."
    )
    return _result({"tools": [], "names": shown, "areas": _areas(index)}, text)


def _shown(entries: Sequence[CatalogEntry]) -> list[Shown]:
    return [(e.exposed, e.spec) for e in entries]


def _verdict(meta: MetaTool, ranked: Ranked) -> dict[str, Any]:
    """What the answer says of its own fit: sure, or the closest with the server's areas."""
    if not ranked.weak:
        return {"match": "good", "note": GOOD_NOTE}
    assert meta.index is not None
    return {"match": "weak", "note": WEAK_NOTE, "hint": RETRY_HINT, "areas": _areas(meta.index)}


def _exact(meta: MetaTool, query: str, allowed: Allowed) -> Result | None:
    """A query that is exactly one searchable tool's name: that tool whole, uncut (the way
    to read a short-listed or cut tool in full where no describe tool is listed)."""
    assert meta.index is not None
    name = query.strip()
    entry = next((e for e in meta.index.entries if e.exposed == name and allowed(name)), None)
    if entry is None:
        return None
    return _result({"tools": [_found(entry)], "more": [], "match": "good", "note": GOOD_NOTE})


def _search(meta: MetaTool, query: str, allowed: Allowed) -> Result:
    if meta.index is None:
        return _result({"tools": []})
    exact = _exact(meta, query, allowed)
    if exact is not None:
        return exact
    ranked = meta.index.rank(query, IN_VIEW, allowed)
    if not ranked.found:
        return _nothing_found(meta.index, query, allowed)
    return _result(fit_answer(_shown(ranked.found), _verdict(meta, ranked)))


def _describe(meta: MetaTool, catalog: Catalog, name: str, allowed: Allowed) -> Result:
    target = meta.targets.get(name)
    entry = catalog.tool(target) if target is not None else None
    if entry is None or not allowed(entry.exposed):
        return _error(unknown_tool_text(name))
    return _result(dict(entry.spec))


def answer_meta(
    listing: Listing, catalog: Catalog, meta_name: str, arguments: Mapping[str, Any], allowed: Allowed
) -> Result:
    """The local answer to a find/search/describe meta-tool call, as a CallToolResult."""
    meta = listing.meta.get(meta_name)
    if meta is None or meta.kind in ("use_tool", "call_tool"):
        return _error(f"'{meta_name}' is not a tool the sidecar answers itself")
    if meta.kind == "describe_tool":
        name = _text_argument(arguments, "name")
        if name is None:
            return _error(f'{meta_name} needs {{"name": "<tool name>"}}: params.arguments.name must be a string')
        return _describe(meta, catalog, name, allowed)
    query = _text_argument(arguments, "query")
    if query is None:
        return _error(f'{meta_name} needs {{"query": "<words>"}}: params.arguments.query must be a non-empty string')
    return _search(meta, query, allowed)


def _inner_arguments(value: object) -> dict[str, Any] | None:
    if value is None:
        return {}
    if isinstance(value, str):  # some models send the object as JSON text
        try:
            value = msgspec.json.decode(value)
        except msgspec.DecodeError:
            return None
    return value if isinstance(value, dict) else None


def resolve_meta_call(
    listing: Listing, meta_name: str, arguments: Mapping[str, Any]
) -> tuple[str, dict[str, Any]] | str:
    """For `use_tool` or a trio's call tool: (engine-visible name, its arguments), or why not."""
    meta = listing.meta.get(meta_name)
    if meta is None or meta.kind not in ("use_tool", "call_tool"):
        return f"'{meta_name}' does not run tools"
    name = arguments.get("name")
    if not isinstance(name, str) or not name:
        shape = '{"name": "<tool name>", "arguments": {...}}'
        return f"{meta_name} needs {shape}: params.arguments.name must be a string"
    inner = _inner_arguments(arguments.get("arguments"))
    if inner is None:
        return f"params.arguments.arguments must be an object (the arguments of '{name}')"
    target = meta.targets.get(name)
    if target is None:
        return unknown_tool_text(name)
    if target in listing.direct_only:
        return f"'{name}' cannot be run through {meta_name}: call it directly, by its own name '{target}'"
    return target, inner
