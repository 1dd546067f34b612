"""The cap holds for any mix of servers, and no server is dropped for it."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.catalog import META_NAMES, UpstreamListing, UpstreamTraits, build_catalog, build_listing
from sidecar.catalog.layouts import LayoutPlan

CAP = 128


@st.composite
def faces(draw: st.DrawFn) -> tuple[list[UpstreamListing], list[UpstreamTraits], LayoutPlan, list[dict[str, Any]]]:
    count = draw(st.integers(1, 20))
    listings: list[UpstreamListing] = []
    traits: list[UpstreamTraits] = []
    for n in range(count):
        size = draw(st.one_of(st.integers(0, 12), st.integers(13, 60), st.integers(61, 220)))
        names = [f"t{i}" for i in range(size)]
        builtin = draw(st.booleans()) if n < 2 else False
        listed = tuple(draw(st.lists(st.sampled_from(names), max_size=14, unique=True))) if names and builtin else ()
        direct = tuple(draw(st.lists(st.sampled_from(names), max_size=2, unique=True))) if names else ()
        transport = draw(st.sampled_from(["stdio", "http", "sse"]))
        listings.append(UpstreamListing(f"s{n}", [{"name": name} for name in names]))
        traits.append(UpstreamTraits(f"s{n}", transport, builtin, listed, direct))
    trio = frozenset(draw(st.sets(st.sampled_from(["stdio", "http", "sse"]))))
    plan = LayoutPlan(bridged=draw(st.booleans()), trio=trio, cap=CAP, name_budget=54)
    face_tools = [{"name": "query_result"}] if draw(st.booleans()) else []
    return listings, traits, plan, face_tools


@settings(max_examples=100, deadline=None)
@given(faces())
def test_the_cap_layout_never_lists_more_than_the_cap_and_reaches_every_tool(
    face: tuple[list[UpstreamListing], list[UpstreamTraits], LayoutPlan, list[dict[str, Any]]],
) -> None:
    listings, traits, plan, face_tools = face
    catalog = build_catalog(listings, 54, META_NAMES | {"query_result"})
    listing = build_listing(catalog, traits, plan, face_tools)
    names = [t["name"] for t in listing.tools]
    assert len(names) <= CAP
    assert len(names) == len(set(names))
    runnable = {target for meta in listing.meta.values() if meta.kind in ("use_tool", "call_tool")
                for target in meta.targets.values()}
    unreachable = [e.exposed for e in catalog.tools if e.exposed not in names and e.exposed not in runnable]
    assert not unreachable, unreachable[:5]
    assert set(listing.direct_only) <= set(names)
    assert f"cap: {len(names)} of at most {CAP} tools listed" in listing.notes
    behind = next((n for n in listing.notes if n.startswith("behind mcp_search_tools: ")), None)
    assert (behind is None) == ("mcp_search_tools" not in names)
