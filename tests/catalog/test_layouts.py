"""The layouts on realistic catalogs: sizes, reachability, refusals, names, notes."""

from __future__ import annotations

import json
from typing import Any

import faces
import msgspec
import pytest
from fixture_platform import DIRECT_ONLY

from sidecar.catalog import (
    Listing,
    UpstreamListing,
    UpstreamTraits,
    answer_meta,
    build_catalog,
    build_listing,
    resolve_meta_call,
)
from sidecar.catalog.layouts import LayoutPlan
from sidecar.catalog.layouts.bridged import find_tool_spec, use_tool_spec
from sidecar.catalog.names import PROVIDER_NAME
from sidecar.catalog.layouts.shown import ANSWER_BYTES

ANYONE = lambda name: True  # noqa: E731


def listed_names(listing: Listing) -> list[str]:
    return [t["name"] for t in listing.tools]


def found_names(result: dict[str, Any]) -> list[str]:
    return [t["name"] for t in result["structuredContent"]["tools"]]


# -- bridged ---------------------------------------------------------------------------


def test_the_bridged_platform_list_is_at_least_70_percent_smaller() -> None:
    full = len(faces.wire(faces.listing("platform", "full")))
    bridged = len(faces.wire(faces.listing("platform", "bridged")))
    assert 45_000 < full < 57_000
    assert bridged <= 0.30 * full, f"{bridged} of {full} bytes is {bridged / full:.0%}"


def test_every_hidden_platform_tool_is_found_and_run_through_the_bridge() -> None:
    catalog, listing = faces.catalog("platform"), faces.listing("platform", "bridged")
    hidden = [e for e in catalog.tools if e.exposed not in listed_names(listing)]
    assert len(hidden) == 25
    for entry in hidden:
        query = entry.name.replace("_", " ")
        answer = answer_meta(listing, catalog, "find_tool", {"query": query}, ANYONE)
        top = answer["structuredContent"]["tools"]
        assert entry.exposed in [t["name"] for t in top], (query, [t["name"] for t in top])
        shown = next(t for t in top if t["name"] == entry.exposed)
        assert shown["inputSchema"] == entry.spec["inputSchema"] and shown["description"] == entry.spec["description"]
        assert resolve_meta_call(listing, "use_tool", {"name": shown["name"], "arguments": {"x": 1}}) == (
            entry.exposed, {"x": 1})


@pytest.mark.parametrize(("request_text", "tool"), [
    ("run the bot every weekday at nine", "create_trigger"),
    ("change the schedule of a trigger", "update_trigger"),
    ("read earlier messages in this room", "read_room_history"),
    ("switch the bot to a local model", "set_bot_model"),
    ("how much did the bots cost this month", "get_usage_report"),
    ("forget what you remembered about the report format", "memory_forget"),
    ("give someone outside a link to the file", "share_file"),
])
def test_plain_platform_requests_find_the_right_hidden_tool(request_text: str, tool: str) -> None:
    answer = answer_meta(faces.listing("platform", "bridged"), faces.catalog("platform"), "find_tool",
                         {"query": request_text}, ANYONE)
    assert tool in found_names(answer)


def test_direct_only_tools_stay_listed_and_are_refused_through_use_tool() -> None:
    listing = faces.listing("team", "bridged")
    for own in DIRECT_ONLY:
        exposed = f"agents__{own}"
        assert exposed in listed_names(listing) and exposed in listing.direct_only
        refusal = resolve_meta_call(listing, "use_tool", {"name": exposed, "arguments": {"text": "hi"}})
        assert isinstance(refusal, str) and "call it directly" in refusal and exposed in refusal
        # the upstream's own name is no alias (issue 12, class 5): unknown, like any other
        assert resolve_meta_call(listing, "use_tool", {"name": own}) == f"unknown tool '{own}' at params.arguments.name"


def test_use_tool_takes_only_visible_names_and_listed_tools_run_through_it() -> None:
    listing = faces.listing("team", "bridged")
    assert resolve_meta_call(listing, "use_tool", {"name": "agents__list_triggers"}) == ("agents__list_triggers", {})
    assert resolve_meta_call(listing, "use_tool", {"name": "list_triggers"}) == (
        "unknown tool 'list_triggers' at params.arguments.name")
    assert resolve_meta_call(listing, "use_tool", {"name": "agents__list_bots", "arguments": None}) == (
        "agents__list_bots", {})
    assert resolve_meta_call(listing, "use_tool", {"name": "x", "arguments": '{"a": 1}'}) == "unknown tool 'x' at params.arguments.name"
    assert resolve_meta_call(listing, "use_tool", {"name": "agents__list_triggers", "arguments": '{"a": 1}'}) == (
        "agents__list_triggers", {"a": 1})


@pytest.mark.parametrize(("arguments", "words"), [
    ({}, "params.arguments.name must be a string"),
    ({"name": 3}, "params.arguments.name must be a string"),
    ({"name": "list_triggers", "arguments": [1]}, "must be an object"),
    ({"name": "list_triggers", "arguments": "not json"}, "must be an object"),
    ({"name": "notes__search_notes"}, "unknown tool 'notes__search_notes'"),  # listed, but not the bridge's
    ({"name": "use_tool"}, "unknown tool 'use_tool'"),
])
def test_use_tool_refuses_bad_shapes_and_names(arguments: dict[str, Any], words: str) -> None:
    answer = resolve_meta_call(faces.listing("team", "bridged"), "use_tool", arguments)
    assert isinstance(answer, str) and words in answer


def test_find_tool_with_no_shared_word_lists_the_hidden_names_the_bot_may_see() -> None:
    listing, catalog = faces.listing("platform", "bridged"), faces.catalog("platform")
    answer = answer_meta(listing, catalog, "find_tool", {"query": "zebra xylophone"}, lambda n: n != "create_bot")
    payload = answer["structuredContent"]
    assert payload["tools"] == [] and "list_triggers" in payload["names"] and "create_bot" not in payload["names"]
    assert len(payload["names"]) == 24 and "list_triggers" in answer["content"][0]["text"]
    assert "post_to_room" not in payload["names"]  # listed tools are not "hidden"


def test_find_tool_never_shows_a_tool_the_bot_may_not_see() -> None:
    listing, catalog = faces.listing("platform", "bridged"), faces.catalog("platform")
    answer = answer_meta(listing, catalog, "find_tool", {"query": "trigger"}, lambda n: "trigger" not in n)
    assert all("trigger" not in n for n in found_names(answer))


def test_find_tool_needs_a_query() -> None:
    listing, catalog = faces.listing("platform", "bridged"), faces.catalog("platform")
    for arguments in ({}, {"query": ""}, {"query": 5}):
        answer = answer_meta(listing, catalog, "find_tool", arguments, ANYONE)
        assert answer["isError"] and "params.arguments.query" in answer["content"][0]["text"]
    assert answer_meta(listing, catalog, "use_tool", {"name": "x"}, ANYONE)["isError"]
    assert answer_meta(listing, catalog, "nope", {}, ANYONE)["isError"]


def test_the_bridge_tools_say_nothing_that_depends_on_what_is_listed() -> None:
    for spec in (find_tool_spec(), use_tool_spec()):
        text = spec["description"].lower()
        assert "hidden" not in text and "not listed" not in text and "not in your list" not in text
    # the same two tools whatever is listed beside them
    catalog = faces.catalog("platform")
    one_listed = build_listing(catalog, [UpstreamTraits("agents", builtin=True, always_listed=("list_bots",))],
                               LayoutPlan(bridged=True))
    assert one_listed.tools[-2:] == faces.listing("platform", "bridged").tools[-2:] == (find_tool_spec(),
                                                                                          use_tool_spec())


def test_an_upstream_tool_named_like_a_meta_tool_is_renamed_when_the_catalog_is_built() -> None:
    tools = [{"name": "find_tool"}, {"name": "use_tool"}, {"name": "mcp_call_tool"}, {"name": "x"}]
    catalog = build_catalog([UpstreamListing("agents", tools)], 54, faces.RESERVED, prefixed=False)
    listing = build_listing(catalog, [UpstreamTraits("agents", builtin=True, always_listed=("x",))],
                            LayoutPlan(bridged=True, cap=5))
    names = listed_names(listing)
    assert names[-2:] == ["find_tool", "use_tool"] and len(names) == len(set(names))
    assert resolve_meta_call(listing, "use_tool", {"name": catalog.tools[0].exposed}) == (catalog.tools[0].exposed, {})
    assert isinstance(resolve_meta_call(listing, "use_tool", {"name": "find_tool"}), str)
    assert catalog.tools[0].exposed.startswith("find_tool_")


def test_a_builtin_with_nothing_hidden_gets_no_bridge_tools() -> None:
    catalog = build_catalog([UpstreamListing("agents", [{"name": "a", "inputSchema": {"type": "object"}}])], 50)
    traits = [UpstreamTraits("agents", builtin=True, always_listed=("a",))]
    assert listed_names(build_listing(catalog, traits, LayoutPlan(bridged=True))) == ["agents__a"]


# -- trio ------------------------------------------------------------------------------


def test_the_425_tool_trio_lists_under_8_kb() -> None:
    listing = faces.listing("shop", "trio")
    assert listed_names(listing) == ["shop__search_tools", "shop__describe_tool", "shop__call_tool"]
    assert len(faces.wire(listing)) < 8 * 1024
    about = listing.tools[0]["description"]
    for area in ("payment", "membership", "invoice", "webhook", "course"):
        assert area in about


PLAIN_REQUESTS = [
    ("refund a payment", "refund_payment"),
    ("cancel a membership", "cancel_membership"),
    ("pause a subscription", "pause_membership"),
    ("list all invoices for a customer", "list_invoices"),
    ("send an invoice to the customer", "send_invoice"),
    ("create a discount coupon", "create_coupon"),
    ("reply to a support ticket", "reply_support_ticket"),
    ("upload a file", "upload_file"),
    ("test a webhook endpoint", "test_webhook"),
    ("see failed webhook deliveries", "list_webhook_deliveries"),
    ("show the payout history", "list_payouts"),
    ("approve someone on the waitlist", "approve_waitlist_entry"),
    ("start a new post in the forum", "create_forum_post"),
    ("export an analytics report", "export_analytics_report"),
    ("revoke an api key", "revoke_api_key"),
    ("chargeback evidence", "submit_evidence_dispute"),
    ("ban a member from the community", "ban_member"),
    ("give store credit to a customer", "create_credit_grant"),
    ("schedule a newsletter", "schedule_email_campaign"),
    ("give someone free access to a product", "create_access_pass"),
    ("add a lesson to a course", "create_course_lesson"),
    ("draw the giveaway winners", "draw_giveaway"),
    ("verify my custom domain", "verify_domain"),
    ("refnd a paymnet", "refund_payment"),  # two typos
]


@pytest.mark.parametrize(("request_text", "tool"), PLAIN_REQUESTS)
def test_search_tools_finds_the_intended_tool_in_its_top_three(request_text: str, tool: str) -> None:
    answer = answer_meta(faces.listing("shop", "trio"), faces.catalog("shop"), "shop__search_tools",
                         {"query": request_text}, ANYONE)
    assert tool in found_names(answer)[:3], found_names(answer)


def test_describe_tool_gives_the_exact_schema_and_call_tool_resolves() -> None:
    listing, catalog = faces.listing("shop", "trio"), faces.catalog("shop")
    answer = answer_meta(listing, catalog, "shop__describe_tool", {"name": "refund_payment"}, ANYONE)
    assert answer["structuredContent"] == catalog.tool("refund_payment").spec  # type: ignore[union-attr]
    assert json.loads(answer["content"][0]["text"]) == answer["structuredContent"]
    assert resolve_meta_call(listing, "shop__call_tool", {"name": "refund_payment", "arguments": {"id": "p"}}) == (
        "refund_payment", {"id": "p"})
    denied = answer_meta(listing, catalog, "shop__describe_tool", {"name": "refund_payment"}, lambda n: False)
    unknown = answer_meta(listing, catalog, "shop__describe_tool", {"name": "refund_paymentz"}, ANYONE)
    assert denied["content"][0]["text"].replace("refund_payment", "X") == unknown["content"][0]["text"].replace(
        "refund_paymentz", "X")


def test_search_results_fit_their_budget_and_name_what_describe_and_call_take() -> None:
    listing, catalog = faces.listing("mixed", "trio"), faces.catalog("mixed")
    answer = answer_meta(listing, catalog, "shop__search_tools", {"query": "refund"}, ANYONE)
    tools, more = answer["structuredContent"]["tools"], answer["structuredContent"]["more"]
    assert len(tools) == 3 and all({"name", "description", "inputSchema"} <= set(t) for t in tools)
    assert 1 <= len(more) <= 7 and all(len(t["about"]) <= 141 for t in more)
    assert len(answer["content"][0]["text"].encode()) <= ANSWER_BYTES
    for shown in tools + more:
        assert not answer_meta(listing, catalog, "shop__describe_tool", {"name": shown["name"]}, ANYONE).get("isError")
        assert isinstance(resolve_meta_call(listing, "shop__call_tool", {"name": shown["name"]}), tuple)


def test_only_engines_transports_get_the_trio() -> None:
    pi = build_listing(faces.catalog("mixed"), faces.traits(faces.config("mixed", "trio")),
                       LayoutPlan(trio=frozenset({"stdio"})))
    assert "shop__search_tools" not in listed_names(pi) and len(pi.tools) == len(faces.catalog("mixed").tools)


def test_a_server_over_100000_description_characters_is_big_with_few_tools() -> None:
    tools = [{"name": f"t{i}", "description": "w " * 30_000, "inputSchema": {"type": "object"}} for i in range(2)]
    catalog = build_catalog([UpstreamListing("docs", tools)], 50)
    listing = build_listing(catalog, [UpstreamTraits("docs", "http")], LayoutPlan(trio=frozenset({"http"})))
    assert listed_names(listing) == ["docs__search_tools", "docs__describe_tool", "docs__call_tool"]
    forty = build_catalog([UpstreamListing("d", [{"name": f"t{i}"} for i in range(40)])], 50)
    assert len(build_listing(forty, [UpstreamTraits("d", "http")], LayoutPlan(trio=frozenset({"http"}))).tools) == 40


def test_trio_names_never_collide_with_catalog_tools() -> None:
    tools = [{"name": "search_tools"}, {"name": "x__describe_tool"}, *({"name": f"t{i}"} for i in range(45))]
    other = [{"name": "describe_tool"}]
    catalog = build_catalog([UpstreamListing("big", tools), UpstreamListing("big__x", other)], 54)
    traits = [UpstreamTraits("big", "http"), UpstreamTraits("big__x", "http")]
    listing = build_listing(catalog, traits, LayoutPlan(trio=frozenset({"http"}), name_budget=54))
    meta = [t["name"] for t in listing.tools if t["name"] in listing.meta]
    assert len(meta) == 3 and not set(meta) & set(catalog.by_tool)
    assert all(PROVIDER_NAME.match(n) and len(n) <= 54 for n in meta)
    search = next(n for n in meta if listing.meta[n].kind == "search_tools")
    assert search.startswith("big__search_tools_")  # the catalog's own big__search_tools keeps its name
    assert resolve_meta_call(listing, meta[2], {"name": "big__search_tools"}) == ("big__search_tools", {})


def test_direct_only_tools_of_a_big_server_stay_listed_beside_its_trio() -> None:
    catalog = build_catalog([UpstreamListing("big", [{"name": f"t{i}"} for i in range(50)])], 54)
    traits = [UpstreamTraits("big", "http", direct_only=("t7",))]
    listing = build_listing(catalog, traits, LayoutPlan(trio=frozenset({"http"})))
    assert listed_names(listing)[0] == "big__t7" and len(listing.tools) == 4
    refusal = resolve_meta_call(listing, "big__call_tool", {"name": "big__t7"})
    assert isinstance(refusal, str) and "call it directly" in refusal


# -- cap -------------------------------------------------------------------------------


def test_the_cap_moves_whole_servers_behind_one_shared_trio_and_says_so() -> None:
    listing = faces.listing("mixed", "cap")
    names = listed_names(listing)
    assert len(names) <= 128 and names[-3:] == ["mcp_search_tools", "mcp_describe_tool", "mcp_call_tool"]
    assert not any(n.startswith("shop__") for n in names)
    assert "shop" in listing.tools[-3]["description"] and "128-tool limit" in listing.tools[-3]["description"]
    assert "behind mcp_search_tools: shop" in listing.notes
    assert f"cap: {len(names)} of at most 128 tools listed" in listing.notes
    assert "warning: 'shop' alone has 425 tools, at least the cap of 128" in listing.notes
    assert resolve_meta_call(listing, "mcp_call_tool", {"name": "shop__refund_payment"}) == ("shop__refund_payment", {})
    answer = answer_meta(listing, faces.catalog("mixed"), "mcp_search_tools", {"query": "refund a payment"}, ANYONE)
    assert found_names(answer)[0] == "shop__refund_payment"


def test_under_the_cap_builtins_come_first_and_half_the_cap_is_a_warning() -> None:
    servers = [UpstreamListing("a", [{"name": f"a{i}"} for i in range(64)]),
               UpstreamListing("agents", [{"name": f"g{i}"} for i in range(10)]),
               UpstreamListing("b", [{"name": f"b{i}"} for i in range(60)])]
    catalog = build_catalog(servers, 54)
    traits = [UpstreamTraits("agents", builtin=True)]
    listing = build_listing(catalog, traits, LayoutPlan(cap=128), face_tools=[{"name": "query_result"}])
    names = listed_names(listing)
    assert names[:2] == ["query_result", "agents__g0"] and names[11] == "a__a0"
    assert len(names) == 1 + 10 + 64 + 3 and "behind mcp_search_tools: b" in listing.notes
    assert "warning: 'a' alone has 64 tools, at least half the cap of 128" in listing.notes


def test_direct_only_tools_stay_listed_when_their_server_goes_behind_the_search() -> None:
    servers = [UpstreamListing("big", [{"name": f"t{i}"} for i in range(200)])]
    listing = build_listing(build_catalog(servers, 54), [UpstreamTraits("big", direct_only=("t3",))], LayoutPlan(cap=10))
    assert listed_names(listing) == ["big__t3", "mcp_search_tools", "mcp_describe_tool", "mcp_call_tool"]
    assert "call it directly" in str(resolve_meta_call(listing, "mcp_call_tool", {"name": "big__t3"}))


def test_the_api_row_combines_bridge_trio_and_cap() -> None:
    listing = faces.listing("mixed", "api")
    names = listed_names(listing)
    assert listing.layout == "bridged+trio+cap" and len(names) <= 128
    assert {"find_tool", "use_tool", "shop__search_tools"} <= set(names) and "mcp_search_tools" not in names
    assert names.index("find_tool") < names.index("notes__search_notes")  # built-ins first


def test_listed_names_are_distinct_and_fit_provider_rules_in_every_golden_layout() -> None:
    for face, spec in faces.FACES.items():
        for label in faces.LABELS:
            names = listed_names(faces.listing(face, label))
            assert len(names) == len(set(names)), (face, label)
            assert all(PROVIDER_NAME.match(f"mcp__{spec.name}__{n}") for n in names), (face, label)


def test_a_big_server_cut_down_by_grants_is_listed_whole() -> None:
    catalog = faces.catalog("shop")
    kept = tuple(e for e in catalog.tools if "refund" in e.name)
    granted = msgspec.structs.replace(catalog, tools=kept, by_tool={e.exposed: e for e in kept})
    listing = build_listing(granted, [UpstreamTraits("shop", "http")], LayoutPlan(trio=frozenset({"http"})))
    assert listed_names(listing) == [e.exposed for e in kept] and len(kept) < 10
