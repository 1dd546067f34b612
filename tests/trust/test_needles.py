"""The scan learns which needles (anchors and gate literals) each word holds: gram by gram
for a short word, the joined way for a short needle or a long word; always exactly the
needles a substring search per needle finds."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from sidecar.trust import scan as poison

_PIECES = st.one_of(st.sampled_from(poison._NEEDLES), st.text(alphabet="abcdeinorstu'-./~@_密钥", max_size=6))
_WORDS = st.lists(st.lists(_PIECES, max_size=12).map("".join).filter(lambda w: " " not in w and "\n" not in w),
                  max_size=40)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(_WORDS)
def test_each_word_holds_exactly_the_needles_a_search_finds(words: list[str]) -> None:
    poison.forget_texts()
    poison._learn(set(words))
    for word in words:
        assert poison._word_needles.get(word, frozenset()) == {n for n in poison._NEEDLES if n in word}, word
    poison.forget_texts()


def test_long_and_short_words_alike() -> None:
    words = ["x" * 30 + "ignore", "y" * 60 + "ignore" + "z" * 10, "be", "of", "~/.ssh", "a" * 41 + "id_rsa"]
    poison.forget_texts()
    poison._learn(words)
    for word in words:
        assert poison._word_needles.get(word, frozenset()) == {n for n in poison._NEEDLES if n in word}, word
    poison.forget_texts()
