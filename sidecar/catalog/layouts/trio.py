"""The big-server trio: an upstream with many tools listed as search, describe and call.

Owns the test for "big" (more than 40 tools, or more than 100,000 characters of tool
descriptions), the three tools' listed text, the area-by-area summary a search tool
carries (bounded in size), and the same trio shared by every upstream a cap moved behind
the search (`mcp_search_tools`, `mcp_describe_tool`, `mcp_call_tool`). No I/O.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from sidecar.catalog.layouts.bridged import QUERY_HINT
from sidecar.catalog.layouts.full import MetaTool
from sidecar.catalog.layouts.parts import Part, name_targets, schema
from sidecar.catalog.merge import CatalogEntry, UpstreamSize

__all__ = [
    "BIG_TOOLS",
    "BIG_DESCRIPTION_CHARS",
    "SHARED_TRIO",
    "TrioNames",
    "is_big",
    "areas",
    "shared_trio_part",
    "trio_meta",
    "trio_part",
    "trio_tools",
]

BIG_TOOLS = 40
BIG_DESCRIPTION_CHARS = 100_000
AREAS_BOUND = 2400  # characters of area summary in one search tool's description
_TAIL_RESERVE = 48  # room kept for "; and N more areas (M tools)"
SHARED_TRIO = ("mcp_search_tools", "mcp_describe_tool", "mcp_call_tool")

TrioNames = tuple[str, str, str]
_PLAIN = frozenset({"list", "get", "retrieve", "read", "create", "update", "delete", "search"})

# Words that say what a tool does rather than what it is about: they name an area only
# when a tool's name has no other word (then its last word does, as in `retrieve_refund`).
_ACTIONS = frozenset(
    "list get retrieve fetch read create add make new update edit modify set patch put delete remove "
    "cancel void archive restore check download upload rerun run start stop end sync merge lock unlock "
    "review search find query send post move copy enable disable approve reject refund capture "
    "publish unpublish pause resume submit validate preview export import count bulk batch hide unhide "
    "revoke rotate reset mark ban unban invite assign close reopen reply convert draw award freeze "
    "unfreeze reverse fulfill expire launch verify promote install uninstall attach detach pin unpin "
    "reorder finalize pay terminate extend change accept redeliver refresh reload schedule complete "
    "duplicate adjust clear remind test share rename tag log link respond"
    .split()
)


def is_big(size: UpstreamSize) -> bool:
    return size.tools > BIG_TOOLS or size.description_chars > BIG_DESCRIPTION_CHARS


def _subjects(entries: Sequence[CatalogEntry]) -> list[tuple[str, list[str]]]:
    """(subject, the name's other words) per tool. The subject is the word of its name that
    the most tool names share, actions and numbers aside."""
    from sidecar.catalog.search import stem, words  # search loads only when a trio is laid out

    named = [[w for w in words(e.name) if not w.isdigit()] or [e.name] for e in entries]
    candidates = [[w for w in parts if w not in _ACTIONS] or parts[-1:] for parts in named]
    shared = Counter(s for found in candidates for s in {stem(w) for w in found})
    pairs = []
    for parts, found in zip(named, candidates):
        subject = max(found, key=lambda w: (shared[stem(w)], -found.index(w)))
        pairs.append((subject, [w for w in parts if stem(w) != stem(subject)]))
    return pairs


def _ranked_areas(entries: Sequence[CatalogEntry]) -> list[tuple[str, int, list[str]]]:
    """(label, tool count, the words its tool names use most beyond the plain verbs) per
    area, most tools first, then by name."""
    from sidecar.catalog.search import stem

    counts: Counter[str] = Counter()
    labels: dict[str, Counter[str]] = {}
    others: dict[str, Counter[str]] = {}
    forms: dict[str, str] = {}  # a stem's first spelling, to show
    for subject, rest in _subjects(entries):
        key = stem(subject)
        counts[key] += 1
        labels.setdefault(key, Counter())[subject] += 1
        kept = [w for w in rest if w not in _PLAIN]
        for word in kept:
            forms.setdefault(stem(word), word)
        others.setdefault(key, Counter()).update({stem(w) for w in kept})
    ranked = []
    for key in sorted(counts, key=lambda k: (-counts[k], k)):
        found = others[key]
        detail = [forms[w] for w in sorted(found, key=lambda w: (-found[w], w))[:5]]
        ranked.append((labels[key].most_common(1)[0][0], counts[key], detail))
    return ranked


def areas(entries: Sequence[CatalogEntry], bound: int = AREAS_BOUND) -> str:
    """What the tools cover, area by area, most tools first, within `bound` characters."""
    ranked = _ranked_areas(entries)
    pieces: list[str] = []
    used = 0
    for position, (label, count, verbs) in enumerate(ranked):
        piece = _area_piece(label, count, verbs)
        reserve = _TAIL_RESERVE if position < len(ranked) - 1 else 0
        if used + len(piece) + reserve > bound:
            rest = ranked[position:]
            pieces.append(f"and {len(rest)} more areas ({sum(c for _, c, _ in rest)} tools)")
            break
        pieces.append(piece)
        used += len(piece) + 2
    return "; ".join(pieces)


def _area_piece(label: str, count: int, verbs: list[str]) -> str:
    unit = "tool" if count == 1 else "tools"
    return f"{label} ({count} {unit}: {', '.join(verbs)})" if verbs else f"{label} ({count} {unit})"


def _search_spec(name: str, about: str, names: TrioNames) -> dict[str, Any]:
    return {
        "name": name,
        "description": (
            f"{about} Answers the best three matches in full (name, description, input schema) and "
            f"the next seven under 'more', one line each, and further names under 'names': look at "
            f"those lists before searching again. Read any tool whole with {names[1]} and run it with {names[2]}. When nothing "
            "fits well the answer says so (match: weak)."
        ),
        "inputSchema": schema(
            {"query": {"type": "string", "description": QUERY_HINT}},
            ["query"],
        ),
        "annotations": {"readOnlyHint": True},
    }


def trio_tools(about: str, names: TrioNames) -> tuple[dict[str, Any], ...]:
    """The listed search, describe and call tools; `about` opens the search description."""
    describe = {
        "name": names[1],
        "description": f"The exact input schema and full description of one tool that {names[0]} found.",
        "inputSchema": schema({"name": {"type": "string", "description": "The tool's name."}}, ["name"]),
        "annotations": {"readOnlyHint": True},
    }
    call = {
        "name": names[2],
        "description": (
            f"Run one tool that {names[0]} found, by name, with arguments matching its input schema; "
            "it runs exactly as a direct call would."
        ),
        "inputSchema": schema(
            {
                "name": {"type": "string", "description": "The tool's name."},
                "arguments": {"type": "object", "description": "The tool's arguments."},
            },
            ["name"],
        ),
    }
    return _search_spec(names[0], about, names), describe, call


def trio_meta(entries: Sequence[CatalogEntry], direct: Sequence[CatalogEntry], names: TrioNames) -> dict[str, MetaTool]:
    """What stands behind a trio: search over the entries it covers (not the `directOnly`
    ones, which stay listed), describe over all, call over all (so those can be refused)."""
    from sidecar.catalog.search import SearchIndex

    direct_names = {e.exposed for e in direct}
    searchable = [e for e in entries if e.exposed not in direct_names]
    every = name_targets(entries)
    return {
        names[0]: MetaTool("search_tools", name_targets(searchable), SearchIndex(searchable)),
        names[1]: MetaTool("describe_tool", every),
        names[2]: MetaTool("call_tool", every),
    }


def trio_part(
    alias: str, entries: Sequence[CatalogEntry], direct: Sequence[CatalogEntry], size: UpstreamSize, names: TrioNames
) -> Part:
    """One big upstream as its trio, with its `directOnly` tools still listed."""
    about = (f"Search the {size.tools} tools of the '{alias}' server. "
             f"It covers, area by area: {areas(entries)}.")

    note = f"trio: '{alias}' ({size.tools} tools, {size.description_chars} description characters) behind {names[0]}"
    listed = (*(e.spec for e in direct), *trio_tools(about, names))
    return Part((alias,), listed, tuple(entries), trio_meta(entries, direct, names), tuple(direct), notes=(note,))


def _server_piece(alias: str, entries: Sequence[CatalogEntry]) -> str:
    unit = "tool" if len(entries) == 1 else "tools"
    ranked = _ranked_areas(entries)
    if len(ranked) < 2:
        return f"{alias} ({len(entries)} {unit})"
    return f"{alias} ({len(entries)} {unit}: {', '.join(label for label, _, _ in ranked[:5])})"


def shared_trio_part(
    behind: Sequence[tuple[str, Sequence[CatalogEntry]]], direct: Sequence[CatalogEntry], cap: int, names: TrioNames
) -> Part:
    """One trio over every upstream the cap moved behind the search."""
    pieces: list[str] = []
    used = 0
    for position, (alias, entries) in enumerate(behind):
        piece = _server_piece(alias, entries)
        if used + len(piece) + _TAIL_RESERVE > AREAS_BOUND and position < len(behind) - 1:
            pieces.append(f"and {len(behind) - position} more servers: {', '.join(a for a, _ in behind[position:])}")
            break
        pieces.append(piece)
        used += len(piece) + 2
    about = (
        f"Search the tools of the servers that are not listed here because of the {cap}-tool limit: "
        f"{'; '.join(pieces)}."
    )
    entries = [e for _, group in behind for e in group]
    aliases = tuple(alias for alias, _ in behind)
    return Part(aliases, trio_tools(about, names), tuple(entries), trio_meta(entries, direct, names), tuple(direct))
