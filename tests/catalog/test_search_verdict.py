"""The words' veto and the verdict (issue 25).

* A request that names a tool outright (its name's words, one of them misspelt) keeps
  that tool first whatever the model scores: shown over every tool of two fixture
  catalogs, each against a model that prefers another tool.
* The verdict: a request no tool serves is weak, a plain one is not; with the model, a
  first tool the words found but the model finds unrelated is weak unless the words name
  it outright (a misspelt name is as far from its tool as nonsense for the model), as is one
  no tool is close to in meaning whose rarest words the catalog does not hold; a short
  request whose words match strongly but no one tool holds them all is weak either way,
  and words only so is a short one whose words the catalog mostly lacks;
  and on both
  development sets as a whole the two errors stay under their floors (a smoke: the
  figures themselves are in docs/generated/search-*.md, from `python -m bench.search --docs`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import faces
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.search import recall, unanswerable
from sidecar.catalog import CatalogEntry, SearchIndex
from sidecar.catalog.search import words
from sidecar.catalog.search.index import UNRELATED
from sidecar.catalog.search.verdict import FAR, KNOWN_WORDS, SHORT, STRONG, WEAK_SCORE
from sidecar.catalog.search.lexical import parse_query
from sidecar.catalog.search.semantic import Looked
from sidecar.catalog.search.text import name_stems

DEV = Path(os.environ.get("OMB_RETRIEVAL_DEV") or Path(__file__).resolve().parents[2].parent / "shared" / "retrieval-dev")


class Adversary:
    """Stands in for the sentence model: every request is closest in meaning to `decoy`,
    and every word the catalog does not know is related to the words of `decoy`'s name."""

    def __init__(self, size: int, decoy: int, decoy_words: frozenset[str] = frozenset()) -> None:
        self.size, self.decoy, self.decoy_words = size, decoy, decoy_words

    def scores(self, query: str) -> list[float]:
        return [1.0 if i == self.decoy else 0.0 for i in range(self.size)]

    def look(self, query: str, unknown: dict[str, str], known: frozenset[str]) -> Looked:
        related = {term: tuple((word, 1.0) for word in sorted(self.decoy_words & known)) for term in unknown}
        return Looked(self.scores(query), related)


def _index(face: str) -> tuple[list[CatalogEntry], SearchIndex]:
    tools = list(faces.catalog(face).tools)
    return tools, SearchIndex(tools, use_model=False).build()


def _misspelt(word: str, at: int) -> str:
    """`word` with two neighbouring letters swapped (a one-edit typo)."""
    i = 1 + at % (len(word) - 2)
    return word[:i] + word[i + 1] + word[i] + word[i + 2 :]


def _typo_request(entry: CatalogEntry, at: int) -> str:
    parts = words(entry.name)
    longest = max(range(len(parts)), key=lambda k: len(parts[k]))
    if len(parts[longest]) >= 5 and parts[longest][1:-1] != parts[longest][1:-1][::-1]:
        parts[longest] = _misspelt(parts[longest], at)
    return " ".join(parts)


@pytest.mark.parametrize("face", ["platform", "shop"])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_a_tool_named_outright_stays_first_whatever_the_model_says(face: str, data: st.DataObject) -> None:
    tools, index = _index(face)
    position = data.draw(st.integers(0, len(tools) - 1))
    request = _typo_request(tools[position], data.draw(st.integers(0, 20)))
    words_only = [e.name for e in index.search(request, 3)]
    named = position in index.lexical.evidence(parse_query(request)).outright
    if words_only[0] != tools[position].name or not named:  # a shared name, or a typo the words miss
        return
    decoy = (position + 1) % len(tools)
    index.semantic = Adversary(len(tools), decoy, name_stems(tools[decoy].name))  # type: ignore[assignment]
    assert index.search(request, 3)[0].name == tools[position].name, request


def test_the_model_still_sorts_what_the_words_leave_open() -> None:
    tools, index = _index("platform")
    decoy = next(i for i, e in enumerate(tools) if e.name == "share_file")
    index.semantic = Adversary(len(tools), decoy)  # type: ignore[assignment]
    assert index.search("give someone outside access", 3)[0].name == "share_file"


@pytest.mark.parametrize(("request_text", "weak"), [
    ("bake a sourdough loaf for grandma", True),
    ("create a trigger", False),
    ("read the history of a room", False),
])
def test_the_verdict_says_when_nothing_fits(request_text: str, weak: bool) -> None:
    _, index = _index("platform")
    assert index.rank(request_text, 10).weak is weak


class Flat:
    """Stands in for the sentence model: every tool is `similarity` close to every request."""

    def __init__(self, size: int, similarity: float) -> None:
        self.size, self.similarity = size, similarity

    def look(self, query: str, unknown: dict[str, str], known: frozenset[str]) -> Looked:
        return Looked([self.similarity] * self.size, {})


@pytest.mark.parametrize(("request_text", "similarity", "weak"), [
    ("read the pizza menu history", 0.0, True),  # two words of read_room_history, by chance
    ("read the pizza menu history", UNRELATED - 0.01, True),
    # Above UNRELATED but no tool close (under FAR), and the rarest words unknown to the catalog.
    ("read the pizza menu history", (UNRELATED + FAR) / 2, True),
    ("read the pizza menu history", FAR + 0.01, False),
    ("read the history of a room", FAR - 0.01, False),  # every word is the catalog's
    ("read the pizza menu history", 0.3, False),
    ("raed room hsitory", 0.0, False),  # the words name read_room_history outright
    ("read the history of a room", 0.0, False),
])
def test_a_first_tool_the_model_finds_unrelated_is_weak_unless_named_outright(
        request_text: str, similarity: float, weak: bool) -> None:
    tools, index = _index("platform")
    index.semantic = Flat(len(tools), similarity)  # type: ignore[assignment]
    ranked = index.rank(request_text, 10)
    assert ranked.found[0].name == "read_room_history" and ranked.weak is weak


@pytest.mark.parametrize(("request_text", "weak"), [
    ("capture the transactions", True),  # both words strong, in different tools: none captures transactions
    ("retrieve the uncollectible", True),
    ("capture the payment", False),  # capture_payment, named outright
    ("list the balance transactions", False),
])
@pytest.mark.parametrize("similarity", [None, 0.3])
def test_a_short_request_whose_strong_words_no_one_tool_holds_is_weak(
        request_text: str, weak: bool, similarity: float | None) -> None:
    tools, index = _index("shop")
    if similarity is not None:
        index.semantic = Flat(len(tools), similarity)  # type: ignore[assignment]
    _, seen = index.order(request_text)
    assert seen is not None and seen.best_words >= STRONG and seen.terms < SHORT, seen
    assert index.rank(request_text, 10).weak is weak


@pytest.mark.parametrize(("request_text", "weak"), [
    ("cancel my yoga class", True),  # one word of the catalog's among rarer ones it lacks
    ("ship a parcel to grandma", True),
    ("refund the invoice", False),
    ("cancel the membership", False),
])
def test_words_only_a_short_request_the_catalog_knows_little_of_is_weak(request_text: str, weak: bool) -> None:
    _, index = _index("shop")
    _, seen = index.order(request_text)
    assert seen is not None and seen.best_words >= WEAK_SCORE and seen.terms < SHORT, seen
    assert (seen.known < KNOWN_WORDS) is weak and index.rank(request_text, 10).weak is weak


@pytest.mark.skipif(not (DEV / "queries.jsonl").exists(), reason=f"no development set at {DEV}")
@pytest.mark.timeout(300)
def test_both_errors_stay_under_their_floors_on_the_development_sets(monkeypatch: Any) -> None:
    monkeypatch.setenv("OMB_RETRIEVAL_DEV", str(DEV))
    answerable = recall(DEV, use_model=False)["overall"]
    served_by_none = unanswerable(DEV, use_model=False)["overall"]
    assert answerable["unsure"] <= 0.15 and answerable["r10"] >= 0.68, answerable
    assert served_by_none["unsure"] >= 0.75, served_by_none  # measured (unsure33): 0.750, (unsure34): 0.807
