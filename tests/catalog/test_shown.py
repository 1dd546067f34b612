"""What a search answer shows, over generated tools of every size: within the byte
budget, the short list always there, the order kept, cuts marked."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.catalog.layouts.shown import ANSWER_BYTES, FULL_SHOWN, LINE_CHARS, SHORT_SHOWN, fit_answer, one_line

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
@given(st.lists(tools(), min_size=1, max_size=10, unique_by=lambda t: t[0]))
def test_an_answer_fits_its_budget_and_keeps_every_name_in_order(found: list[tuple[str, dict[str, Any]]]) -> None:
    answer = fit_answer(found, {"match": "good"})
    size = len(msgspec.json.encode(answer))
    shown = [t["name"] for t in answer["tools"]] + [t["name"] for t in answer["more"]]
    assert shown == [name for name, _ in found][: FULL_SHOWN + SHORT_SHOWN]
    assert size <= ANSWER_BYTES or len(answer["tools"]) == 1
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


def test_one_line_is_the_first_sentence_or_line() -> None:
    assert one_line("First line\nsecond line") == "First line"
    assert one_line(None) == "" and one_line("   ") == ""
    assert len(one_line("word " * 100)) <= LINE_CHARS + 1
