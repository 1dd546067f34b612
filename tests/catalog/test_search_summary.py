"""A long description is read as its summary, apart from its notes and examples
(`sidecar/catalog/search/summary.py`): over every real captured tool and generated ones."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bench import real_set
from sidecar.catalog import CatalogEntry, SearchIndex
from sidecar.catalog.search.lexical import tool_text
from sidecar.catalog.search.summary import SUMMARY_CHARS, split_description


def _descriptions() -> list[str]:
    return [t["description"] for tools in real_set.catalogs().values() for t in tools if t.get("description")]


def test_every_real_summary_is_short_and_holds_no_code() -> None:
    for description in _descriptions():
        summary, rest = split_description(description)
        assert summary and "```" not in summary and "**" not in summary
        assert len(summary) <= 2 * SUMMARY_CHARS or not rest, summary
        if len(description) <= SUMMARY_CHARS:
            assert not rest


sentence = st.text(st.characters(codec="ascii", categories=["L"]), min_size=3, max_size=12).map(
    lambda w: f"{w} does a thing.")


@settings(max_examples=200, deadline=None)
@given(opening=st.lists(sentence, min_size=1, max_size=40), example=st.text(max_size=300))
def test_the_summary_is_the_opening_and_code_stays_out(opening: list[str], example: str) -> None:
    text = " ".join(opening)
    description = f"{text}\n```json\nCODEMARK {example}\n```\nMore notes."
    summary, rest = split_description(description)
    if len(description) <= SUMMARY_CHARS:  # a short description is read whole
        assert rest == ""
        return
    assert summary and text.startswith(summary) and "CODEMARK" not in summary
    assert "CODEMARK" in rest and "More notes" in rest


def test_a_word_only_in_the_examples_counts_less_than_one_in_the_summary() -> None:
    filler = "Extra guidance for agents follows here. " * 12
    tools: list[dict[str, Any]] = [
        {"name": "alpha", "description": "Rotates the widget keys.", "inputSchema": {"type": "object"}},
        {"name": "beta", "description": "Lists gadgets. " + filler + "Example: rotates nothing.",
         "inputSchema": {"type": "object"}},
    ]
    entries = [CatalogEntry(t["name"], "up", t["name"], t) for t in tools]
    index = SearchIndex(entries, use_model=False).build()
    assert [e.name for e in index.search("rotates", 2)] == ["alpha", "beta"]
    assert "rotates nothing" not in tool_text(entries[1])
