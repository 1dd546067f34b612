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


def test_a_needle_on_any_side_of_a_long_words_piece_edge_is_found() -> None:
    step = poison._PIECE - poison._LONGEST + 1
    for needle in (min(poison._NEEDLES, key=len), max(poison._NEEDLES, key=len), "ignore"):
        for edge in (step, 2 * step):
            for at in range(edge - len(needle) - 1, edge + 2):
                word = "q" * at + needle + "q" * poison._PIECE
                poison.forget_texts()
                poison._learn([word])
                assert needle in poison._word_needles.get(word, frozenset()), (needle, at)
    poison.forget_texts()


def test_a_word_that_repeats_itself_is_searched_once_per_distinct_piece(monkeypatch) -> None:
    searched: list[int] = []
    search = poison._search_joined

    def counting(words: list[str], needles: object, found: dict[str, list[str]]) -> None:
        searched.append(sum(map(len, words)))
        search(words, needles, found)  # type: ignore[arg-type]

    monkeypatch.setattr(poison, "_search_joined", counting)
    word = "w" * 5_000_000 + "ignore"
    poison.forget_texts()
    poison._learn([word])
    assert poison._word_needles[word] >= {"ignore"}
    assert sum(searched) <= 3 * poison._PIECE  # not five million characters for every needle
    poison.forget_texts()
