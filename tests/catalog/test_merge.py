from sidecar.catalog import UpstreamListing, build_catalog, full_layout


def tool(name: str, description: str = "d", **extra: object) -> dict:
    return {"name": name, "description": description, "inputSchema": {"type": "object"}, **extra}


def test_order_follows_upstreams_then_their_own_order() -> None:
    catalog = build_catalog([UpstreamListing("b", [tool("z"), tool("a")]), UpstreamListing("a", [tool("m")])], 50)
    assert [e.exposed for e in catalog.tools] == ["b__z", "b__a", "a__m"]
    assert catalog.tool("b__a").name == "a"  # type: ignore[union-attr]


def test_invisible_characters_are_stripped_and_counted_but_text_kept() -> None:
    listing = UpstreamListing("s", [tool("t", "Use\u200b this\u202e tool\x07.\nSecond line\ttab")])
    catalog = build_catalog([listing], 50)
    assert catalog.tools[0].spec["description"] == "Use this tool.\nSecond line\ttab"
    assert catalog.stripped_chars == 3


def test_schema_strings_are_stripped_but_property_names_are_kept() -> None:
    schema = {"type": "object", "properties": {"q\u200b": {"type": "string", "description": "x\u2060y"}}}
    catalog = build_catalog([UpstreamListing("s", [tool("t", inputSchema=schema)])], 50)
    properties = catalog.tools[0].spec["inputSchema"]["properties"]
    assert properties == {"q\u200b": {"type": "string", "description": "xy"}}


def test_other_fields_pass_through_unchanged() -> None:
    original = tool("t", annotations={"readOnlyHint": True}, outputSchema={"type": "object"}, title="T")
    catalog = build_catalog([UpstreamListing("s", [original])], 50)
    assert catalog.tools[0].spec == {**original, "name": "s__t"}


def test_tools_without_names_are_skipped_and_sizes_are_known() -> None:
    catalog = build_catalog([UpstreamListing("s", [tool("a", "abc"), {"description": "x"}, tool("")])], 50)
    assert [e.exposed for e in catalog.tools] == ["s__a"]
    assert catalog.skipped_tools == 2
    assert catalog.sizes["s"].tools == 1 and catalog.sizes["s"].description_chars == 3


def test_full_layout_pages() -> None:
    catalog = build_catalog([UpstreamListing("s", [tool(f"t{i}") for i in range(5)])], 50)
    listing = full_layout(catalog)
    page, following = listing.page(0, 2)
    assert [t["name"] for t in page] == ["s__t0", "s__t1"] and following == 2
    assert listing.page(4, 2)[1] is None
