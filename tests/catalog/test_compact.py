"""The compact layout in memory: signatures, the misfit checker, which tools it touches,
how it is switched on, and the bytes it saves on real catalogs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import faces
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.catalog import build_listing, choose_layout
from sidecar.catalog.layouts import LayoutPlan
from sidecar.catalog.layouts.compact import compact_spec, misfit, signature
from sidecar.config import parse_config

REFERENCE = Path(__file__).resolve().parents[1] / "trust" / "reference_tools.json"


def obj(properties: dict[str, Any], required: list[str] | None = None, **more: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required or [], **more}


@pytest.mark.parametrize(("schema", "line"), [
    (obj({"path": {"type": "string"}, "recursive": {"type": "boolean"}, "mode": {"enum": ["a", "b"]}}, ["path", "mode"]),
     '(path: string, recursive?: boolean, mode: "a"|"b")'),
    (obj({"ids": {"type": "array", "items": {"type": "integer"}}}), "(ids?: integer[])"),
    (obj({"edits": {"type": "array", "items": obj({"old": {"type": "string"}, "new": {"type": "string"}}, ["old"])}},
         ["edits"]), "(edits: {old: string, new?: string}[])"),
    (obj({"v": {"anyOf": [{"type": "string"}, {"type": "null"}]}}), "(v?: string|null)"),
    (obj({"v": {"type": ["string", "number"]}, "c": {"const": 3}}), "(v?: string|number, c?: 3)"),
    ({"type": "object"}, "()"),
    (None, "()"),
])
def test_a_signature_is_one_line_of_names_types_and_optional_marks(schema: Any, line: str) -> None:
    assert signature(schema) == line


def test_a_long_signature_is_cut() -> None:
    schema = obj({f"field_{i}": {"type": "string"} for i in range(200)})
    line = signature(schema)
    assert len(line) <= 600 and line.endswith("…)") and "\n" not in line


@pytest.mark.parametrize(("arguments", "problem"), [
    ({}, "missing 'path'"),
    ({"path": 3}, "'path' must be string, not int"),
    ({"path": "a", "depth": 1.5}, "'depth' must be integer, not float"),
    ({"path": "a", "depth": True}, "'depth' must be integer, not bool"),
    ({"path": "a", "mode": "c"}, "'mode' must be one of \"r\"|\"w\""),
    ({"path": "a", "extra": 1}, "unknown 'extra'"),
    ({"path": "a", "depth": 2.0, "mode": "r"}, None),
])
def test_the_checker_names_what_does_not_fit(arguments: dict[str, Any], problem: str | None) -> None:
    schema = obj({"path": {"type": "string"}, "depth": {"type": "integer"}, "mode": {"enum": ["r", "w"]}}, ["path"],
                 additionalProperties=False)
    assert misfit(schema, arguments) == problem


def _value_of(kind: str) -> st.SearchStrategy[Any]:
    return {"string": st.text(max_size=5), "integer": st.integers(), "number": st.floats(allow_nan=False),
            "boolean": st.booleans(), "array": st.lists(st.integers(), max_size=2)}[kind]


KINDS = ["string", "integer", "number", "boolean", "array"]


@settings(max_examples=200, deadline=None)
@given(st.data(), st.dictionaries(st.from_regex(r"[a-z]{1,6}", fullmatch=True), st.sampled_from(KINDS), min_size=1, max_size=5))
def test_arguments_built_from_the_schema_always_fit(data: st.DataObject, kinds: dict[str, str]) -> None:
    schema = obj({k: {"type": v} for k, v in kinds.items()}, sorted(kinds)[:2])
    arguments = {k: data.draw(_value_of(v)) for k, v in kinds.items()}
    assert misfit(schema, arguments) is None
    missing = dict(arguments)
    missing.pop(sorted(kinds)[0])
    assert misfit(schema, missing) == f"missing '{sorted(kinds)[0]}'"


def test_compact_lists_catalog_tools_by_signature_and_leaves_meta_tools_whole() -> None:
    cfg = faces.config("team", "bridged")
    plan = LayoutPlan(bridged=True, compact=True)
    listing = build_listing(faces.catalog("team"), faces.traits(cfg), plan)
    by_name = {t["name"]: t for t in listing.tools}
    assert by_name["find_tool"]["inputSchema"]["required"] == ["query"]  # a meta-tool: whole
    compacted = [t for t in listing.tools if t["name"] in listing.compact]
    assert compacted and all(t["inputSchema"] == {"type": "object"} and "Arguments: (" in t["description"]
                             for t in compacted)
    assert plan.name == "bridged+compact"


@pytest.mark.parametrize(("document", "compact"), [
    ({"features": {"compactListing": True}}, True),
    ({"face": {"layout": "compact"}}, True),
    ({"bot": {"engine": "api"}}, False),  # no engine is compact unless the bot asks
    ({"bot": {"engine": "pi"}}, False),
    ({"bot": {"engine": "api"}, "features": {"compactListing": True}}, True),
])
def test_compact_applies_only_when_asked_for(document: dict[str, Any], compact: bool) -> None:
    plan = choose_layout(parse_config({"mcpServers": {}, **document}, {}), {})
    assert plan.compact is compact


def _sizes(tools: list[dict[str, Any]]) -> tuple[int, int]:
    full = len(msgspec.json.encode({"tools": tools}))
    return full, len(msgspec.json.encode({"tools": [compact_spec(t) for t in tools]}))


@pytest.mark.parametrize("face", ["platform", "shop", "team"])
def test_compact_is_at_least_30_percent_smaller_on_the_fixture_catalogs(face: str) -> None:
    full, compact = _sizes([e.spec for e in faces.catalog(face).tools])
    assert compact <= 0.70 * full, (face, full, compact)


@pytest.mark.parametrize("server", ["everything", "filesystem", "memory"])
def test_compact_is_at_least_30_percent_smaller_on_the_npm_reference_servers(server: str) -> None:
    full, compact = _sizes(json.loads(REFERENCE.read_text())[server])
    assert compact <= 0.70 * full, (server, full, compact)


def test_compact_keeps_the_hints_that_say_something_and_drops_the_rest() -> None:
    spec = {"name": "t", "title": "T", "description": "d", "inputSchema": obj({}), "outputSchema": obj({}),
            "annotations": {"readOnlyHint": True, "destructiveHint": True, "title": "T"},
            "execution": {"taskSupport": "forbidden"}}
    assert compact_spec(spec) == {"name": "t", "description": "d\nArguments: ()", "inputSchema": {"type": "object"},
                                  "annotations": {"readOnlyHint": True}}
    tasks = compact_spec({**spec, "execution": {"taskSupport": "optional"}})
    assert tasks["execution"] == {"taskSupport": "optional"}
