"""App-only tools (MCP Apps `_meta.ui.visibility` without "model") in every layout and
every search: never listed, never found, never described, never run by a meta-tool; a tool
for the model and the app alike is listed with its `_meta.ui` unchanged."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sidecar.catalog import UpstreamListing, UpstreamTraits, answer_meta, build_catalog, build_listing, resolve_meta_call
from sidecar.catalog.apps import APP_MARKER, UI_EXTENSION, is_app_only, model_catalog, take_app_marker, ui_extension
from sidecar.catalog.layouts import LayoutPlan

ANYONE = lambda name: True  # noqa: E731
UI = "ui://clock/app.html"


def _tool(name: str, visibility: list[str] | None = None, words: str = "") -> dict[str, Any]:
    ui: dict[str, Any] = {"resourceUri": UI}
    if visibility is not None:
        ui["visibility"] = visibility
    return {"name": name, "description": f"{name.replace('_', ' ')} {words}".strip(),
            "inputSchema": {"type": "object", "properties": {"tick_count": {"type": "integer"}}},
            "_meta": {"ui": ui, "other": 1}}


def _listings() -> list[UpstreamListing]:
    """A built-in server (bridged), a big one (trio: over 40 tools) and a small one, each
    with an app-only tool whose name and words match what a search would look for."""
    builtin = [_tool("clock_show", ["model", "app"]), _tool("clock_tick", ["app"], "advance the clock"),
               {"name": "list_bots", "description": "list the bots", "inputSchema": {"type": "object"}}]
    big = [{"name": f"report_{i}", "description": f"report number {i}", "inputSchema": {"type": "object"}}
           for i in range(45)] + [_tool("chart_refresh", ["app"], "refresh the chart clock")]
    small = [_tool("gauge_show"), _tool("gauge_poll", [], "poll the gauge clock")]
    return [UpstreamListing("agents", builtin), UpstreamListing("big", big), UpstreamListing("small", small)]


TRAITS = [UpstreamTraits("agents", builtin=True, always_listed=("list_bots",)),
          UpstreamTraits("big", transport="http"), UpstreamTraits("small", transport="http")]
APP_ONLY = {"agents__clock_tick", "big__chart_refresh", "small__gauge_poll"}
PLANS = {
    "full": LayoutPlan(),
    "bridged": LayoutPlan(bridged=True),
    "trio": LayoutPlan(trio=frozenset({"http"})),
    "cap": LayoutPlan(bridged=True, trio=frozenset({"http"}), cap=4),
    "compact": LayoutPlan(compact=True),
    "bridged+trio+compact": LayoutPlan(bridged=True, trio=frozenset({"http"}), compact=True),
}


def _words(result: dict[str, Any]) -> str:
    return json.dumps(result)


@pytest.mark.parametrize("layout", sorted(PLANS))
def test_app_only_tools_are_in_no_listing_and_no_search(layout: str) -> None:
    catalog = build_catalog(_listings(), 54)
    assert {e.exposed for e in catalog.tools if is_app_only(e.spec)} == APP_ONLY
    assert {e.exposed for e in catalog.tools if e.app_only} == APP_ONLY  # judged once, at the merge
    listing = build_listing(catalog, TRAITS, PLANS[layout])
    listed = {t["name"] for t in listing.tools}
    assert not listed & APP_ONLY and not APP_ONLY & set(_words({"tools": list(listing.tools)}).split('"'))
    for meta_name, meta in listing.meta.items():
        assert not set(meta.targets) & APP_ONLY and not set(meta.targets.values()) & APP_ONLY
        for name in APP_ONLY:
            own = name.split("__", 1)[1]
            if meta.kind in ("find_tool", "search_tools"):
                for query in (name, own, "clock tick advance refresh poll", "gauge poll"):
                    answer = _words(answer_meta(listing, catalog, meta_name, {"query": query}, ANYONE))
                    answer = answer.replace(query, "")  # an answer may say what was asked
                    assert name not in answer and own not in answer, (layout, meta_name, query)
            elif meta.kind == "describe_tool":
                for asked in (name, own):
                    answer = _words(answer_meta(listing, catalog, meta_name, {"name": asked}, ANYONE))
                    assert "tick_count" not in answer.replace(asked, ""), (layout, meta_name, asked)
            else:
                for asked in (name, own):
                    assert isinstance(resolve_meta_call(listing, meta_name, {"name": asked, "arguments": {}}), str)


@pytest.mark.parametrize("layout", ["full", "trio"])
def test_a_tool_for_the_model_and_the_app_keeps_its_meta_ui_whole(layout: str) -> None:
    listing = build_listing(build_catalog(_listings(), 54), TRAITS, PLANS[layout])
    shown = {t["name"]: t for t in listing.tools}
    assert shown["agents__clock_show"]["_meta"] == {"ui": {"resourceUri": UI, "visibility": ["model", "app"]},
                                                   "other": 1}
    assert shown["small__gauge_show"]["_meta"] == {"ui": {"resourceUri": UI}, "other": 1}


def test_visibility_reading_and_the_marker() -> None:
    assert is_app_only(_tool("a", ["app"])) and is_app_only(_tool("a", []))
    assert not is_app_only(_tool("a")) and not is_app_only(_tool("a", ["model"]))
    assert not is_app_only({"name": "a", "_meta": {"ui": {"visibility": "app"}}})  # not a list: not read as one
    assert not is_app_only({"name": "a", "_meta": "x"})
    catalog = build_catalog(_listings()[2:], 54)
    assert model_catalog(build_catalog(_listings()[1:2][:0], 54)).tools == ()
    assert [e.exposed for e in model_catalog(catalog).tools] == ["small__gauge_show"]
    assert take_app_marker({APP_MARKER: True, "traceparent": "t"}) == ({"traceparent": "t"}, True)
    assert take_app_marker({APP_MARKER: "yes"}) == (None, False)  # only `true` says so
    assert take_app_marker(None) == (None, False)


def test_the_apps_extension_is_offered_when_an_upstream_offers_it_or_is_still_starting() -> None:
    assert ui_extension([{"tools": {}}, {"extensions": {"other/ext": {}}}]) is None
    assert ui_extension([{"tools": {}}, {"extensions": {UI_EXTENSION: {"v": 1}}}]) == {"v": 1}
    assert ui_extension([{"tools": {}}, None]) == {}
    assert ui_extension([]) is None
