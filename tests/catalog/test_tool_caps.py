"""The per-tool size caps, as pure functions: whatever a tool holds, what is listed stays
within the caps, is still a valid tool (a schema that is an object schema), keeps its
name and every field under the caps untouched, and says where it was cut."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, strategies as st

from sidecar.catalog import ToolsEncoding, UpstreamListing, build_catalog
from sidecar.catalog.sanitize import ToolCaps, cap_tool

CAPS = ToolCaps(description_chars=200, schema_bytes=300)

schemas = st.recursive(
    st.fixed_dictionaries({"type": st.sampled_from(["string", "integer", "boolean"])}),
    lambda inner: st.fixed_dictionaries({"type": st.just("object"),
                                         "properties": st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=12)}),
    max_leaves=40,
)
tools = st.fixed_dictionaries(
    {"name": st.text(min_size=1, max_size=10), "description": st.text(max_size=600), "inputSchema": schemas},
    optional={"title": st.text(max_size=400), "outputSchema": schemas,
              "annotations": st.dictionaries(st.text(max_size=5), st.text(max_size=200), max_size=4)},
)


def _size(value: Any) -> int:
    return len(msgspec.json.encode(value))


@given(tools)
def test_a_capped_tool_is_within_the_caps_and_still_valid(tool: dict[str, Any]) -> None:
    capped, cut = cap_tool(tool, CAPS)
    assert capped["name"] == tool["name"]
    for key in ("description", "title"):
        if key in tool and len(tool[key]) > CAPS.description_chars:
            assert capped[key].startswith(tool[key][: CAPS.description_chars]) and "cut by the sidecar" in capped[key]
        elif key in tool:
            assert capped[key] == tool[key]
    schema = capped["inputSchema"]
    if _size(tool["inputSchema"]) > CAPS.schema_bytes:
        assert schema["type"] == "object" and "over the sidecar's limit" in schema["description"]
        assert _size(schema) <= CAPS.schema_bytes
    else:
        assert schema == tool["inputSchema"]
    for key in ("outputSchema", "annotations"):
        if key in tool:
            assert (key in capped) == (_size(tool[key]) <= CAPS.schema_bytes)
    assert cut == (capped != tool)


def test_a_stand_in_schema_keeps_the_argument_names_when_they_fit() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "description": "x" * 500}, "b": {}},
              "required": ["a", "zz"]}
    capped, cut = cap_tool({"name": "t", "inputSchema": schema}, CAPS)
    assert cut and capped["inputSchema"]["properties"] == {"a": {}, "b": {}}
    assert capped["inputSchema"]["required"] == ["a"]


def test_cut_tools_are_counted_per_upstream() -> None:
    listings = [
        UpstreamListing("big", [{"name": "x", "description": "d" * 300}, {"name": "y", "description": "ok"}]),
        UpstreamListing("small", [{"name": "z", "description": "ok"}]),
    ]
    catalog = build_catalog(listings, 40, caps=CAPS)
    assert catalog.sizes["big"].cut_tools == 1 and catalog.sizes["small"].cut_tools == 0
    assert "cut by the sidecar: 300 characters" in catalog.tool("big__x").spec["description"]  # type: ignore[union-attr]


def test_a_name_that_had_to_be_repaired_is_left_out_and_counted() -> None:
    catalog = build_catalog([UpstreamListing("u", [{"name": "a\ufffd"}, {"name": "b"}])], 40)
    assert [e.exposed for e in catalog.tools] == ["u__b"] and catalog.skipped_tools == 1


@given(st.lists(tools, max_size=6))
def test_a_merge_caps_the_same_with_or_without_the_encoded_listing(listed: list[dict[str, Any]]) -> None:
    """With the listing's encoding (as the face hands it in) only tools that could be over a cap are
    measured; what is listed is the same as measuring every tool."""
    fast = build_catalog([UpstreamListing("u", listed, encoding=ToolsEncoding.of(msgspec.json.encode(listed)))], 40, caps=CAPS)
    slow = build_catalog([UpstreamListing("u", listed)], 40, caps=CAPS)
    assert [e.spec for e in fast.tools] == [e.spec for e in slow.tools]
    assert fast.sizes == slow.sizes
