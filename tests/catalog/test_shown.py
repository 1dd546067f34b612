"""What a search answer shows, over generated tools of every size: within the byte
budget, the short list always there, the bare names after it within their own bytes, the
order kept, cuts marked."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.catalog.layouts.shown import (
    ANSWER_BYTES,
    FULL_SHOWN,
    IN_VIEW,
    LINE_CHARS,
    NAMES_BYTES,
    SHORT_SHOWN,
    fit_answer,
    one_line,
    shown_names,
)

WORDS = st.text(alphabet="abcdefghij klmnop. ", min_size=0, max_size=40)


@st.composite
def tools(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    name = draw(st.from_regex(r"[a-z]{3,12}_[a-z]{3,12}", fullmatch=True))
    description = draw(WORDS) * draw(st.integers(1, 120))
    properties = {f"p{i}": {"type": draw(st.sampled_from(["string", "integer", "array"])),
                            "description": draw(WORDS) * draw(st.integers(0, 30))}
                  for i in range(draw(st.integers(0, 25)))}
    return name, {"name": name, "description": description,
                  "inputSchema": {"type": "object", "properties": properties, "required": sorted(properties)[:2]}}


@settings(max_examples=150, deadline=None)
@given(st.lists(tools(), min_size=1, max_size=IN_VIEW + 5, unique_by=lambda t: t[0]))
def test_an_answer_fits_its_budget_and_keeps_every_name_in_order(found: list[tuple[str, dict[str, Any]]]) -> None:
    answer = fit_answer(found, {"match": "good"})
    size = len(msgspec.json.encode(answer))
    shown = [t["name"] for t in answer["tools"]] + [t["name"] for t in answer["more"]]
    assert shown == [name for name, _ in found][: FULL_SHOWN + SHORT_SHOWN]
    assert shown_names(answer) == [name for name, _ in found][: len(shown_names(answer))]
    assert len(msgspec.json.encode(answer.get("names", []))) <= NAMES_BYTES
    assert size <= ANSWER_BYTES or (len(answer["tools"]) == 1 and "names" not in answer)
    assert all(len(t["about"]) <= LINE_CHARS + 1 for t in answer["more"])
    for tool in answer["tools"]:
        whole = dict(found)[tool["name"]]
        if not tool.get("cut"):
            assert tool["description"] == whole["description"] and tool["inputSchema"] == whole["inputSchema"]
        assert set(tool["inputSchema"].get("properties", {})) == set(whole["inputSchema"]["properties"])


def test_small_answers_are_shown_whole() -> None:
    found = [(f"tool_{i}", {"name": f"tool_{i}", "description": "Does one thing. Then more.",
                            "inputSchema": {"type": "object"}}) for i in range(12)]
    answer = fit_answer(found, {})
    assert len(answer["tools"]) == 3 and len(answer["more"]) == 7
    assert not any(t.get("cut") for t in answer["tools"]) and answer["more"][0]["about"] == "Does one thing."


def test_the_names_after_the_short_list_come_bare_in_rank_order_within_their_bytes() -> None:
    found = [(f"tool_{i}", {"name": f"tool_{i}", "description": "Does one thing.", "inputSchema": {"type": "object"}})
             for i in range(IN_VIEW + 10)]
    answer = fit_answer(found, {})
    assert answer["names"] == [f"tool_{i}" for i in range(FULL_SHOWN + SHORT_SHOWN, IN_VIEW)]
    long_names = [(f"{'x' * 60}_{i}", spec) for i, (_, spec) in enumerate(found)]
    bounded = fit_answer(long_names, {})["names"]
    assert 0 < len(bounded) < IN_VIEW - FULL_SHOWN - SHORT_SHOWN
    assert len(msgspec.json.encode(bounded)) <= NAMES_BYTES
    assert "names" not in fit_answer(found[: FULL_SHOWN + SHORT_SHOWN], {})


def test_one_line_is_the_first_sentence_or_line() -> None:
    assert one_line("First line\nsecond line") == "First line"
    assert one_line(None) == "" and one_line("   ") == ""
    assert len(one_line("word " * 100)) <= LINE_CHARS + 1
