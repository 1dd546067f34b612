"""The word index: tokens, stems, typos, field weights, determinism, speed."""

from __future__ import annotations

import time
from typing import Any

import faces
import msgspec
import pytest
from fixture_shop import shop_tools

from sidecar.catalog import CatalogEntry, SearchIndex, UpstreamListing, build_catalog
from sidecar.catalog.search import query_terms, stem, words


def entries(*tools: dict[str, Any]) -> list[CatalogEntry]:
    return list(build_catalog([UpstreamListing("s", list(tools))], 54, prefixed=False).tools)


def tool(name: str, description: str = "", **properties: str) -> dict[str, Any]:
    props = {k: {"type": "string", "description": v} for k, v in properties.items()}
    return {"name": name, "description": description, "inputSchema": {"type": "object", "properties": props}}


def names(found: list[CatalogEntry]) -> list[str]:
    return [e.name for e in found]


def test_names_split_on_underscores_dashes_dots_and_case_changes() -> None:
    assert words("listRoomTargets") == ["list", "room", "targets"]
    assert words("get-HTTPServer_config.v2") == ["get", "http", "server", "config", "v2"]
    assert words("memory_update") == ["memory", "update"]


@pytest.mark.parametrize(("forms", "shared"), [
    (("trigger", "triggers"), "trigger"), (("schedule", "scheduled", "scheduling", "schedules"), "schedul"),
    (("reply", "replies", "replied"), "reply"), (("run", "running"), "run"), (("list", "listed", "listing"), "list"),
    (("box", "boxes"), "box"), (("match", "matches"), "match"), (("status",), "status"), (("string",), "string"),
])
def test_plural_and_inflected_forms_share_a_stem(forms: tuple[str, ...], shared: str) -> None:
    assert {stem(f) for f in forms} == {shared}


def test_query_terms_drop_stop_words_unless_that_is_all() -> None:
    assert query_terms("How do I list the triggers?") == ["list", "trigger"]
    assert query_terms("the") == ["the"]


def test_a_word_in_the_name_outranks_the_same_word_in_a_description() -> None:
    index = SearchIndex(entries(tool("send_report", "Mails a weekly digest."),
                                tool("archive_room", "Archive a room; its weekly report stops.")))
    assert names(index.search("report", 2)) == ["send_report", "archive_room"]


def test_schema_property_names_and_descriptions_are_searched() -> None:
    index = SearchIndex(entries(tool("a", "Unrelated."), tool("b", "Unrelated.", cron="A cron expression.")))
    assert names(index.search("cron", 3)) == ["b"]
    index = SearchIndex(entries(tool("a", "Unrelated.", when="Uses a crontab line."), tool("c", "Unrelated.")))
    assert names(index.search("crontab", 3)) == ["a"]


def test_nested_schema_enums_and_array_items_are_searched() -> None:
    nested = {"name": "n", "description": "x", "inputSchema": {"type": "object", "properties": {
        "filter": {"type": "object", "properties": {"mode": {"type": "string", "enum": ["refunded", "paid"]}}},
        "rows": {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"}}}}}}}
    index = SearchIndex(entries(nested, tool("other", "y")))
    assert names(index.search("refund", 1)) == ["n"] and names(index.search("sku", 1)) == ["n"]


def test_small_typos_are_forgiven() -> None:
    index = SearchIndex(entries(tool("list_triggers", "List the triggers."), tool("list_rooms", "List rooms.")))
    assert names(index.search("tirggers", 1)) == ["list_triggers"]  # a swap
    assert names(index.search("trigers", 1)) == ["list_triggers"]  # a missing letter
    assert names(index.search("triggrs lsit", 1)) == ["list_triggers"]


def test_a_query_that_shares_no_word_finds_nothing() -> None:
    index = SearchIndex(entries(tool("list_triggers", "List the triggers.")))
    assert index.search("quantum chromodynamics", 3) == []


def test_allowed_filters_before_counting_so_three_are_still_returned() -> None:
    index = SearchIndex(entries(*(tool(f"list_thing_{i}", "List things.") for i in range(6))))
    found = index.search("list things", 3, allowed=lambda name: not name.endswith(("_0", "_1")))
    assert names(found) == ["list_thing_2", "list_thing_3", "list_thing_4"]


def test_ties_keep_catalog_order_and_answers_never_change() -> None:
    catalog = faces.catalog("shop")
    first = [names(SearchIndex(catalog.tools).search(q, 6)) for q in ("cancel", "list", "payment id")]
    again = [names(SearchIndex(catalog.tools).search(q, 6)) for q in ("cancel", "list", "payment id")]
    assert first == again
    assert first[1][:2] == ["list_payments", "list_payment_methods"]


def test_the_425_tool_catalog_indexes_quickly() -> None:
    """Built on the first query; a smoke bound with room for a busy test machine."""
    fresh = build_catalog([UpstreamListing("shop", msgspec.json.decode(msgspec.json.encode(shop_tools())))], 54)
    started = time.process_time()
    index = SearchIndex(fresh.tools).build()
    built = time.process_time() - started
    started = time.process_time()
    index.search("refund a payment", 3)
    first_query = time.process_time() - started
    assert built < 0.25 and first_query < 0.25, (built, first_query)
