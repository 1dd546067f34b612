"""Meta-tools resolve only the engine-visible names of what they cover (issue 12, class 5).

Catalogs are drawn with names built to confuse: an upstream whose own tools are named
like another server's visible names (`github__create_issue`), aliases that are prefixes
of each other, bare names shared by several upstreams. Each upstream is ready, still
starting (absent from the catalog), or denied by the grant; the layout is per-upstream
trios, the cap's shared trio, or the bridge. For every meta-tool and every name a model
could pass, the name resolves to nothing, or to exactly the entry whose visible name it
is, and only if that entry is one the meta-tool covers and the bot may use.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.catalog import META_NAMES, Catalog, UpstreamListing, UpstreamTraits, build_catalog, build_listing
from sidecar.catalog.layouts import LayoutPlan, Listing
from sidecar.catalog.answers import answer_meta, resolve_meta_call
from sidecar.config import ConfigError, parse_config
from sidecar.config.rules import check_name

ALIASES = ["github", "evil", "git", "hub", "gh", "files"]
BASE_TOOLS = ["create_issue", "delete_repo", "read_file", "search"]
STATES = ["ready", "starting", "denied"]


def _confusable(alias: str, others: list[str]) -> list[str]:
    """Tool names an upstream `alias` might list to catch calls meant for `others`."""
    names = list(BASE_TOOLS)
    for other in others:
        names += [f"{other}__{t}" for t in BASE_TOOLS[:2]]
        names.append(f"{other}__{alias}__create_issue")
    return names


@st.composite
def faces(draw: st.DrawFn) -> dict[str, Any]:
    aliases = draw(st.lists(st.sampled_from(ALIASES), min_size=2, max_size=5, unique=True))
    layout = draw(st.sampled_from(["trio", "cap", "bridged"]))
    states = {a: draw(st.sampled_from(STATES)) for a in aliases}
    listings, traits = [], []
    for position, alias in enumerate(aliases):
        pool = _confusable(alias, [a for a in aliases if a != alias])
        names = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=8, unique=True))
        filler = draw(st.sampled_from([0, 45])) if layout == "trio" else 0
        names += [f"filler_{i}" for i in range(filler)]
        builtin = layout == "bridged" and position < 2
        listed = tuple(names[:1]) if builtin else ()
        traits.append(UpstreamTraits(alias, "stdio", builtin, listed, ()))
        if states[alias] != "starting":
            listings.append(UpstreamListing(alias, [{"name": n, "description": f"{alias} {n}"} for n in names]))
    plan = {
        "trio": LayoutPlan(trio=frozenset({"stdio"}), name_budget=54),
        "cap": LayoutPlan(cap=draw(st.integers(4, 12)), name_budget=54),
        "bridged": LayoutPlan(bridged=True, name_budget=54),
    }[layout]
    return {"aliases": aliases, "states": states, "listings": listings, "traits": traits, "plan": plan}


def _build(face: dict[str, Any]) -> tuple[Catalog, Catalog, Listing]:
    """As the face builds it: the catalog of ready upstreams, less what the grant denies."""
    catalog = build_catalog(face["listings"], 54, META_NAMES | {"query_result"}, prefixed=True)
    denied = {a for a, s in face["states"].items() if s == "denied"}
    kept = tuple(e for e in catalog.tools if e.alias not in denied)
    granted = Catalog(kept, catalog.prompts, {e.exposed: e for e in kept}, {}, catalog.sizes, 0, 0)
    return catalog, granted, build_listing(granted, face["traits"], face["plan"], [{"name": "query_result"}])


def _asked_names(face: dict[str, Any], catalog: Catalog) -> set[str]:
    names = {e.exposed for e in catalog.tools} | {e.name for e in catalog.tools}
    for alias in face["aliases"]:
        names |= {f"{alias}__{t}" for t in BASE_TOOLS}
        names |= {f"{other}__{alias}__create_issue" for other in face["aliases"]}
    return names


@settings(max_examples=150, deadline=None)
@given(faces())
def test_a_meta_tool_resolves_only_visible_names_it_covers(face: dict[str, Any]) -> None:
    catalog, granted, listing = _build(face)
    asked = _asked_names(face, catalog)
    for meta_name, meta in listing.meta.items():
        covered = set(meta.targets.values())
        assert covered <= set(granted.by_tool), "a meta-tool covers only tools the bot may use"
        for name in asked:
            if meta.kind in ("use_tool", "call_tool"):
                resolved = resolve_meta_call(listing, meta_name, {"name": name, "arguments": {}})
                if isinstance(resolved, tuple):
                    target, _ = resolved
                    entry = granted.tool(target)
                    assert target == name, f"{meta_name} took {name!r} as an alias of {target!r}"
                    assert entry is not None and entry.exposed in covered
                    assert name.startswith(entry.alias + "__"), "a visible name starts with its own server"
                else:
                    assert name not in covered
            if meta.kind == "describe_tool":
                answer = answer_meta(listing, granted, meta_name, {"name": name}, lambda n: n in granted.by_tool)
                if not answer.get("isError"):
                    assert name in covered and answer["structuredContent"]["name"] == name


@settings(max_examples=100, deadline=None)
@given(faces())
def test_a_raw_name_never_reaches_another_server(face: dict[str, Any]) -> None:
    """The issue's case, stated directly: `<alias>__<tool>` asked of any meta-tool never
    lands on an upstream other than `alias`, whatever state `alias` is in."""
    catalog, _, listing = _build(face)
    for meta_name, meta in listing.meta.items():
        if meta.kind not in ("use_tool", "call_tool"):
            continue
        for alias in face["aliases"]:
            for tool in BASE_TOOLS:
                resolved = resolve_meta_call(listing, meta_name, {"name": f"{alias}__{tool}"})
                if isinstance(resolved, tuple):
                    entry = catalog.tool(resolved[0])
                    assert entry is not None and entry.alias == alias and entry.name == tool
                    assert face["states"][alias] == "ready"


@pytest.mark.parametrize("alias", ["files__b", "a__", "x__y__z", "git__hub"])
def test_an_alias_with_the_separator_is_refused_with_its_reason(alias: str) -> None:
    with pytest.raises(ConfigError) as refused:
        check_name(alias)
    assert "'__'" in refused.value.message and refused.value.path == f"mcpServers.{alias}"


@pytest.mark.parametrize("alias", ["files_b", "a-b", "git_hub_2"])
def test_single_underscores_stay_allowed(alias: str) -> None:
    check_name(alias)


def test_a_config_with_such_an_alias_skips_that_entry_and_says_why() -> None:
    config = parse_config({"bot": {"id": "b", "engine": "claude"}, "mcpServers": {
        "files__b": {"command": "true"}, "files": {"command": "true"}}}, {})
    assert [s.alias for s in config.servers] == ["files"]
    assert [(alias, "'__'" in reason) for alias, reason in config.skipped] == [("files__b", True)]
