"""The act a request asks for, and the verdict's two clauses over it (issue 25).

* `request_action` reads the act an imperative request opens with, past polite words,
  a verb with its particle ("turn on") as one act; a question, another language or a verb
  the lexicon lacks states none. Any text reads as a known act or none, and only its
  opening words count (a long request costs no more).
* `tool_actions` reads a tool's acts from its name, its description's summary and its
  input's enum values.
* Over a fixture catalog: a short request whose act none of the top tools does is unsure
  with and without the model; words only, one whose act the top tools do but to other
  things is unsure too; a request that names its tool outright is never unsure by them.
"""

from __future__ import annotations

import faces
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.catalog import SearchIndex
from sidecar.catalog.search.actions import FAMILIES, request_action, tool_actions
from sidecar.catalog.search.lexical import parse_query
from sidecar.catalog.search.semantic import Looked
from sidecar.catalog.search.verdict import SHIPPED, unsure


def _act(request: str) -> frozenset[str]:
    return request_action(parse_query(request).plain)[0]


@pytest.mark.parametrize(("request_text", "act"), [
    ("delete the repository", "delete"),
    ("Please restore last night's backup", "restore"),
    ("could you archive the channel", "archive"),
    ("turn on two-factor login", "enable"),
    ("turn off the alarm", "disable"),
    ("set up a new project", "create"),
    ("rolled back the release", "restore"),
])
def test_the_act_a_request_opens_with(request_text: str, act: str) -> None:
    assert act in _act(request_text)


@pytest.mark.parametrize("request_text", [
    "is the build green",  # a question
    "who deleted the bucket",
    "borra el repositorio",  # another language: the lexicon reads English verbs only
    "frobnicate the widget",  # a verb the lexicon lacks
    "the repository, deleted",
    "",
])
def test_a_request_the_lexicon_does_not_read_states_no_act(request_text: str) -> None:
    assert _act(request_text) == frozenset()


_WORDS = st.sampled_from("please could you turn on off back up delete restore the repo is what 删除 borra".split()) | st.text(max_size=12)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=400), opening=st.lists(_WORDS, min_size=12, max_size=12), tail=st.lists(_WORDS, max_size=400))
def test_any_text_reads_as_a_known_act_or_none_and_only_its_opening_counts(text: str, opening: list[str],
                                                                          tail: list[str]) -> None:
    families = {line.split(":")[0] for line in FAMILIES}
    assert _act(text) <= families
    words = parse_query(" ".join(opening)).plain
    if len(words) >= 12:  # the words past the opening do not change the act
        assert request_action(words + parse_query(" ".join(tail)).plain)[0] == request_action(words)[0]


def test_a_tools_acts_come_from_its_name_summary_and_enums() -> None:
    assert "delete" in tool_actions("drop_table", "")
    assert "restore" in tool_actions("volume_tool", "Recovers a volume from one of its snapshots.")
    assert "approve" in tool_actions("create_review", "Reviews a pull request.", "APPROVE REQUEST_CHANGES COMMENT")
    assert not {"delete", "restore"} & tool_actions("list_backups", "Lists the backups of a database.")


class Flat:
    """Stands in for the sentence model: every tool is `similarity` close to every request."""

    def __init__(self, size: int, similarity: float) -> None:
        self.size, self.similarity = size, similarity

    def look(self, query: str, unknown: dict[str, str], known: frozenset[str]) -> Looked:
        return Looked([self.similarity] * self.size, {})


def _index(face: str, similarity: float | None) -> SearchIndex:
    tools = list(faces.catalog(face).tools)
    index = SearchIndex(tools, use_model=False).build()
    if similarity is not None:
        index.semantic = Flat(len(tools), similarity)  # type: ignore[assignment]
    return index


@pytest.mark.parametrize("similarity", [None, 0.3])
@pytest.mark.parametrize(("face", "request_text"), [
    ("platform", "translate the room history"),  # room tools, none translates
    ("shop", "pin the badge on the customer profile page"),  # badge tools, none pins
])
def test_a_short_request_whose_act_no_top_tool_does_is_unsure(face: str, request_text: str,
                                                              similarity: float | None) -> None:
    index = _index(face, similarity)
    _, seen = index.order(request_text)
    assert seen is not None and seen.act and not seen.act_done and not seen.named, seen
    assert index.rank(request_text, 3).weak
    assert not unsure(seen, SHIPPED._replace(act_terms=0)), seen  # it is that clause that speaks


def test_words_only_an_act_done_to_other_things_is_unsure() -> None:
    index = _index("shop", None)
    _, seen = index.order("pin the coupon")  # pin_forum_post and pin_chat_message pin, not coupons
    assert seen is not None and seen.act and seen.act_done and not seen.object_held, seen
    assert index.rank("pin the coupon", 3).weak
    assert not unsure(seen, SHIPPED._replace(object_terms=0)), seen


@pytest.mark.parametrize("similarity", [None, 0.3])
@pytest.mark.parametrize(("face", "request_text"), [
    ("platform", "archive the room"),
    ("platform", "read the history of a room"),
    ("shop", "pin the forum post"),
    ("shop", "duplicate the plan"),
])
def test_a_request_whose_tool_does_its_act_is_not_unsure(face: str, request_text: str,
                                                         similarity: float | None) -> None:
    index = _index(face, similarity)
    assert not index.rank(request_text, 3).weak
