"""The `x-mcp-header` rules (SEP-2243): which annotations are valid, and the `Mcp-Param-*`
headers a call carries, checked against a reader that decodes them as a server does, over
generated values (any text, non-ASCII and control characters included, any integer,
both booleans)."""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from hypothesis import given, strategies as st

from sidecar.catalog.merge import ToolsEncoding, UpstreamListing, build_catalog
from sidecar.wire.param_headers import PREFIX, ParamHeaders, annotation_problem, header_value, param_headers

TOKEN = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+-.^_`|~"
_SENTINEL = re.compile(r"^=\?base64\?(.*)\?=$")


def read_back(header: str) -> str:
    """What a server reads from the header: the base64 inside the sentinel, else the text."""
    found = _SENTINEL.match(header)
    return base64.b64decode(found[1], validate=True).decode() if found else header


def tool(name: str, **properties: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object", "properties": properties}}


@given(st.text())
def test_any_text_reads_back_whole_from_a_value_safe_to_send(value):
    sent = header_value(value)
    assert re.fullmatch(r"[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?|", sent)  # visible ASCII, no edge spaces
    assert read_back(sent) == value


@given(st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1))
def test_plain_visible_ascii_goes_as_it_is(value):
    if not value.startswith("=?base64?"):
        assert header_value(value) == value


@given(region=st.text(), priority=st.integers(), verbose=st.booleans())
def test_each_annotated_argument_is_mirrored_and_reads_back(region, priority, verbose):
    annotated = {"region": "Region", "priority": "Priority", "verbose": "Verbose"}
    arguments = {"region": region, "priority": priority, "verbose": verbose, "query": "SELECT 1"}
    headers = param_headers(annotated, arguments)
    assert set(headers) == {PREFIX + "Region", PREFIX + "Priority", PREFIX + "Verbose"}
    assert read_back(headers[PREFIX + "Region"]) == region
    assert int(headers[PREFIX + "Priority"]) == priority
    assert headers[PREFIX + "Verbose"] == ("true" if verbose else "false")


def test_a_null_or_missing_argument_has_no_header():
    annotated = {"region": "Region", "verbose": "Verbose", "debug": "Debug"}
    assert param_headers(annotated, {"region": "", "verbose": None}) == {PREFIX + "Region": ""}
    assert param_headers(annotated, "not arguments") == {}


def test_the_suites_invalid_annotations_are_each_refused_with_a_reason():
    invalid = {
        "empty": {"value": {"type": "string", "x-mcp-header": ""}},
        "object": {"data": {"type": "object", "x-mcp-header": "Data"}},
        "array": {"items": {"type": "array", "x-mcp-header": "Items"}},
        "null": {"nil": {"type": "null", "x-mcp-header": "Nil"}},
        "number": {"score": {"type": "number", "x-mcp-header": "Score"}},
        "same": {"a": {"type": "string", "x-mcp-header": "Region"}, "b": {"type": "string", "x-mcp-header": "Region"}},
        "case": {"a": {"type": "string", "x-mcp-header": "MyField"}, "b": {"type": "string", "x-mcp-header": "myfield"}},
        "space": {"value": {"type": "string", "x-mcp-header": "My Region"}},
        "colon": {"value": {"type": "string", "x-mcp-header": "Region:Primary"}},
        "accent": {"value": {"type": "string", "x-mcp-header": "R\u00e9gion"}},
        "tab": {"value": {"type": "string", "x-mcp-header": "Region\t1"}},
        "not text": {"value": {"type": "string", "x-mcp-header": 7}},
    }
    for name, properties in invalid.items():
        assert annotation_problem(tool(name, **properties)), name
    assert annotation_problem(tool("ok", region={"type": "string", "x-mcp-header": "Region"})) is None
    assert annotation_problem(tool("plain", query={"type": "string"})) is None


@given(st.lists(st.tuples(st.text(alphabet=TOKEN, min_size=1, max_size=12),
                          st.sampled_from(["string", "integer", "boolean"])), min_size=1, max_size=6))
def test_token_names_on_primitive_properties_are_valid_unless_two_match_ignoring_case(annotations):
    properties = {f"p{i}": {"type": kind, "x-mcp-header": header} for i, (header, kind) in enumerate(annotations)}
    distinct = len({header.lower() for header, _ in annotations}) == len(annotations)
    assert (annotation_problem(tool("t", **properties)) is None) == distinct


@given(st.text(min_size=1).filter(lambda h: any(c not in TOKEN for c in h)))
def test_a_name_with_any_character_outside_a_token_is_refused(header):
    assert annotation_problem(tool("t", value={"type": "string", "x-mcp-header": header})) is not None


def test_a_learned_listing_mirrors_only_valid_tools_and_names_the_invalid():
    table = ParamHeaders()
    tools = [tool("valid_tool", region={"type": "string", "x-mcp-header": "Region"}),
             tool("invalid_number", score={"type": "number", "x-mcp-header": "Score"}),
             tool("plain", query={"type": "string"})]
    left_out = table.learn(tools)
    assert [name for name, _ in left_out] == ["invalid_number"] and "number" in left_out[0][1]
    call = {"name": "valid_tool", "arguments": {"region": "Hello, \u4e16\u754c"}}
    assert table.for_call(call) == {PREFIX + "Region": header_value("Hello, \u4e16\u754c")}
    refused = {"name": "invalid_number", "arguments": {"score": 1}}
    assert table.for_call(refused) == {} and table.for_call("not an object") == {}


def test_the_catalog_leaves_out_a_tool_with_invalid_annotations_and_counts_it():
    tools = [tool("valid_tool", region={"type": "string", "x-mcp-header": "Region"}),
             tool("invalid_colon", value={"type": "string", "x-mcp-header": "Region:Primary"})]
    catalog = build_catalog([UpstreamListing("suite", tools, encoding=ToolsEncoding.of(json.dumps(tools).encode()))], 64)
    assert [entry.name for entry in catalog.tools] == ["valid_tool"]
    assert catalog.skipped_tools == 1
