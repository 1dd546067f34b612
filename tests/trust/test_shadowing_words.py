"""The shadowing rule's words, read piece by piece, are the words of the whole joined text;
and a foreign name found among them is found whichever side the check walks."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bench.catalogs import build_catalog, github_set
from sidecar.trust.scan import _joined, forget_texts, identifiers, shadowing, tool_text

_IDENT = re.compile(r"[a-z][a-z0-9_-]{4,}(?:__[a-z0-9_-]+)?")
# letters, look-alikes of other scripts, invisible and combining marks, separators of every kind
_ALPHABET = st.sampled_from(list("abcdeXYZ019_- \t\n.:/") + ["\u0456", "\u043e", "\u200b", "\u0307", "\u00e9",
                                                                 "\u2019", "\ufb01", "\x7f", "\u00a0"])
_TEXT = st.text(_ALPHABET, max_size=40)
_TOOL = st.fixed_dictionaries(
    {"name": _TEXT, "description": _TEXT},
    optional={"title": _TEXT, "inputSchema": st.fixed_dictionaries(
        {"type": st.just("object"),
         "properties": st.dictionaries(_TEXT, st.fixed_dictionaries({"type": st.just("string"),
                                                                      "description": _TEXT}), max_size=3)})},
)


def _whole_text_words(tool: dict[str, Any]) -> frozenset[str]:
    """What the rule read before: one findall over the joined, folded text."""
    return frozenset(_IDENT.findall(_joined(tool_text(tool), fold=True)[0]))


@settings(max_examples=300, deadline=None)
@given(_TOOL)
def test_words_read_piece_by_piece_are_the_whole_texts(tool: dict[str, Any]) -> None:
    assert identifiers(tool) == _whole_text_words(tool)


def test_the_bench_catalogs_words_are_the_same_both_ways() -> None:
    forget_texts()
    for spec in github_set(3):
        for tool in build_catalog(spec):
            assert identifiers(tool) == _whole_text_words(tool)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.from_regex(r"[a-z][a-z0-9_]{5,12}", fullmatch=True), max_size=30),
       st.lists(st.from_regex(r"[a-z][a-z0-9_]{5,12}", fullmatch=True), max_size=30))
def test_a_foreign_name_among_the_words_is_found_whichever_side_is_smaller(words: list[str], names: list[str]) -> None:
    tool = {"name": "t", "description": " ".join(words)}
    foreign = {name: "other" for name in names}
    found = shadowing(tool, identifiers(tool), foreign)
    assert (found is not None) == bool(set(words) & set(names))
