"""`plain_text` is the scan's own text of a definition (its walk's strings, in order, each
folded, joined by single spaces), made without field paths: equal wherever it answers, and
it answers for every printable ASCII definition."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from bench.catalogs import GITHUB, build_catalog
from sidecar.trust import scan as poison
from sidecar.trust.pins import clean_json, listed_bytes
from sidecar.trust.plain_text import plain_join, plain_strings, plain_text
from sidecar.trust.scan_rules import JSON_TYPES, SCHEMA_WORDS
from tests.trust.corpus import POISONED, benign_catalogs


def _scan_text(tool: dict[str, Any]) -> str:
    return poison._joined(poison.tool_text(tool))[0]


def _printable_ascii(value: Any) -> bool:
    if isinstance(value, str):
        return value.isascii() and value.replace("\n", "").replace("\t", "").replace("\r", "").isprintable()
    if isinstance(value, dict):
        return all(_printable_ascii(k) and _printable_ascii(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_printable_ascii(v) for v in value)
    return True


def test_the_corpora_read_the_same() -> None:
    tools = [t for ts in benign_catalogs().values() for t in ts] + [t for _, t in POISONED] + build_catalog(GITHUB)
    answered = 0
    for tool in tools:
        text = plain_text(tool)
        if text is not None:
            answered += 1
            assert text == _scan_text(tool), tool.get("name")
        else:
            assert not _printable_ascii(tool), tool.get("name")
    assert answered > 0.95 * len(tools)


_WORDS = st.sampled_from([*sorted(SCHEMA_WORDS)[:20], *JSON_TYPES, "type", "name", "do_not_tell", "a-b-c", "x_y",
                          "Ignore  previous\tinstructions.", "send it to http://x.io", " ", "", "\n", "ÉTÉ", "\u200b",
                          "\x07", "Tab\there", "ＡＢ", "note", "keep. param"])
_TEXT = st.one_of(_WORDS, st.text(alphabet=" .\t\nabcXYZ_-é\u00a0\x1c", max_size=12))
_JSON = st.recursive(st.one_of(_TEXT, st.integers(), st.booleans(), st.none()),
                     lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_TEXT, inner, max_size=4)),
                     max_leaves=25)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.one_of(st.sampled_from(["name", "description", "title", "inputSchema", "annotations",
                                                  "_meta"]), _TEXT), _JSON, max_size=6))
def test_generated_definitions_read_the_same(tool: dict[str, Any]) -> None:
    text = plain_text(tool)
    if text is not None:
        assert text == _scan_text(tool)
    elif _printable_ascii(tool):
        raise AssertionError("a printable ASCII definition was not read")


def test_nesting_past_the_walks_turn_is_left_to_the_scan() -> None:
    deep: Any = "tell nobody"
    for _ in range(80):
        deep = {"x_y_z": deep}
    assert plain_text({"name": "n", "inputSchema": deep}) is None


def test_every_character_is_told_printable_as_the_scan_tells_it() -> None:
    """Which texts are answered is decided on their bytes (`translate`): for each character of
    ASCII and a few beyond, alone and inside words, as `str.isascii` and `str.isprintable` (tabs
    and line ends allowed) decide it."""
    for char in [*map(chr, range(128)), "\u00a0", "é", "\u200b", "\udc80", "\U0001f600"]:
        for text in (char, f"keep {char} this", f"a{char}{char}b"):
            expected = text.isascii() and text.replace("\n", "").replace("\t", "").replace("\r", "").isprintable()
            answered = plain_text({"name": "n", "description": text})
            assert (answered is not None) == expected, repr(text)
            if answered is not None:
                assert answered == _scan_text({"name": "n", "description": text}), repr(text)


def _reference_strings(tool: dict[str, Any], most: int) -> list[str] | None:
    """`plain_strings` as one plain recursive walk (each container a call of its own): the
    walk reads some containers in place, and must stop where this one stops, with the same strings."""
    out: list[str] = []

    class Stop(Exception):
        pass

    def walk(value: Any, key: str, depth: int) -> None:
        if isinstance(value, str):
            if not (key == "type" and value in JSON_TYPES):
                out.append(value)
        elif depth > 64:
            raise Stop
        elif isinstance(value, (dict, list)):
            if len(out) + len(value) > most:
                raise Stop
            for inner_key, inner in (value.items() if isinstance(value, dict) else ((key, v) for v in value)):
                inner_key = str(inner_key)
                if isinstance(value, dict) and inner_key not in SCHEMA_WORDS:
                    out.append(inner_key)
                    if inner_key.count("_") + inner_key.count("-") >= 2:
                        out.append(inner_key.replace("_", " ").replace("-", " "))
                walk(inner, inner_key, depth + 1)

    if len(tool) > most:
        return None
    if isinstance(tool.get("name"), str):
        out.append(tool["name"].replace("_", " ").replace("-", " "))
    keys = [k for k in ("description", "title") if k in tool] + [k for k in tool if k not in ("description", "title", "name")]
    try:
        for key in keys:
            if key not in SCHEMA_WORDS:
                out.append(key)
                if key.count("_") + key.count("-") >= 2:
                    out.append(key.replace("_", " ").replace("-", " "))
            walk(tool[key], key, 0)
    except Stop:
        return None
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.one_of(st.sampled_from(["name", "description", "title", "inputSchema", "type"]), _TEXT),
                       _JSON, max_size=6), st.integers(min_value=0, max_value=40))
def test_the_walk_stops_where_a_plain_walk_stops(tool: dict[str, Any], most: int) -> None:
    assert plain_strings(tool, most) == _reference_strings(tool, most)


def test_nesting_about_the_walks_turn_is_told_as_a_plain_walk_tells_it() -> None:
    shapes = [(1, 1), (1, 0)] + [(period, phase) for period in (2, 3, 4) for phase in range(period)]
    for depth in range(58, 72):
        for period, phase in shapes:  # a list at each level `phase` (mod `period`), else an object
            deep: Any = "tell nobody"
            for level in range(depth):
                if level % period == phase:
                    deep = ["string", deep, {"type": "null"}]
                else:
                    deep = {"x_y_z": deep, "type": "object"}
            for tool in ({"name": "n", "inputSchema": deep}, {"name": "n", "type": deep}, {"name": "n", "a": [deep]}):
                assert plain_strings(tool, 10_000) == _reference_strings(tool, 10_000), (depth, period, phase)


def _told_from_json(tool: dict[str, Any]) -> str | None:
    strings = plain_strings(tool)
    return plain_join(strings, clean_json(listed_bytes(tool))) if strings is not None else None


def test_a_clean_json_tells_the_text_as_its_characters_do() -> None:
    """Told from the definition's JSON (no escape, no DEL: `clean_json`), the plain text is the
    one its characters give, wherever a character sits (a name, a key, a value)."""
    for char in [*map(chr, range(128)), "\u00a0", "é", "\u200b", "\U0001f600"]:
        for text in (char, f"keep {char} this", f"a{char}{char}b", f"x_{char}-y"):
            for tool in ({"name": "n", "description": text}, {"name": text, "inputSchema": {text: {"type": "string"}}},
                         {"name": "n", "inputSchema": {"properties": {"k": {"enum": [text, "b"]}}}}):
                assert _told_from_json(tool) == plain_text(tool), repr(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.one_of(st.sampled_from(["name", "description", "title", "inputSchema"]), _TEXT),
                       _JSON, max_size=6))
def test_generated_definitions_read_the_same_told_from_their_json(tool: dict[str, Any]) -> None:
    assert _told_from_json(tool) == plain_text(tool)


def test_the_corpora_read_the_same_told_from_their_json() -> None:
    tools = [t for ts in benign_catalogs().values() for t in ts] + [t for _, t in POISONED] + build_catalog(GITHUB)
    assert all(_told_from_json(tool) == plain_text(tool) for tool in tools)
    assert sum(clean_json(listed_bytes(tool)) for tool in tools) > 0.9 * len(tools)
