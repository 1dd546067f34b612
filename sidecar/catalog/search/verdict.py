"""The verdict: does the first tool of a ranking fit the request, or does nothing fit?

Owns the evidence the verdict reads (`Signals`, all from what the ranking already worked
out) and the rule over it (`unsure`). A ranking is unsure when:

* words only, either of:
  - no tool scores for the words, as the request wrote them, above what one rare word in
    a description gives (`WEAK_SCORE`);
  - the words do not name the first tool outright, the request is short (under `SHORT`
    terms) and the words the catalog holds anywhere (as written or with a typo) carry
    under `KNOWN_WORDS` of it, each word weighted by its rarity in the catalog (a word no
    tool holds weighs most): the request speaks of things the catalog does not have;
* either way: the request is short (under `ACT_TERMS` terms), does not name the first tool
  outright and opens with an act the action lexicon knows (`actions`: "delete", "restore",
  "turn on", ...) that none of the first `actions.ACTS` tools does (by the words of its
  name, its description's summary or its input's enum values): the tools are about the
  right things but none does what was asked ("restore" a backup against tools that only
  create and list backups);
* words only: as above, but some of the top tools do the act and none of those holds any
  of the request's other words the catalog knows, or a synonym of one (under
  `OBJECT_TERMS` terms): the act is done to other things ("delete" a branch against tools
  that delete monitors and documents);
* either way: the words match strongly (a best word score of `STRONG` or more) a short
  request (under `SHORT` terms) that names no tool outright (no tool's whole name, and no
  tool holds every term): its words belong to different tools, none of which does what
  was asked ("archive" a channel against a catalog that only lists channels);
* with the model, any of:
  - the words score under `WEAK_SCORE_BLENDED` and no tool is closer in meaning than
    `WEAK_SIMILARITY` (cosine);
  - the words do not name the first tool outright and the model finds it unrelated
    (cosine under `UNRELATED`): a common or stand-in word matched, not the need;
  - the words do not name the first tool outright, no tool is closer in meaning than
    `FAR`, and the words the catalog holds carry under `KNOWN` of the request (as above).

The thresholds (`Thresholds`, the shipped ones `SHIPPED`) were set on the development sets
as a whole (invented and real catalogs, answerable queries and queries no tool serves) and
cross-validated over queries and over catalogs by `bench.search_unsure`; no item of either
set is named here, and the action lexicon is a general one. The other signals (the first tool's share of the request, the
unexplained share) are there for that study: they did not earn a clause.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from sidecar.catalog.search.actions import ACTS, request_action
from sidecar.catalog.search.lexical import Evidence, LexicalIndex, Query
from sidecar.catalog.search.lexicon import english_synonyms
from sidecar.catalog.search.related import Related
from sidecar.catalog.search.text import stem

__all__ = ["ACT_TERMS", "FAR", "KNOWN", "KNOWN_WORDS", "OBJECT_TERMS", "SHIPPED", "SHORT", "STRONG", "UNRELATED",
           "WEAK_SCORE", "WEAK_SCORE_BLENDED", "WEAK_SIMILARITY", "Signals", "Thresholds", "signals", "unsure"]

WEAK_SCORE = 5.5  # words alone: a best lexical score under this is weak
WEAK_SCORE_BLENDED = 8.0  # with the model: a best lexical score under this,
WEAK_SIMILARITY = 0.22  # and no tool closer in meaning than this (cosine), is weak
UNRELATED = 0.05  # with the model: a first tool no closer than this (cosine), not named outright, is weak
FAR = 0.14  # with the model: no tool closer than this (cosine),
KNOWN = 0.35  # and the catalog's words carrying under this share of the request, is weak
KNOWN_WORDS = 0.30  # words only: the catalog's words carrying under this share of a short request, is weak
STRONG = 20.0  # either way: a best word score of this or more,
SHORT = 5  # on a request of fewer terms than this that names no tool outright, is weak
ACT_TERMS = 7  # either way: a request of fewer terms than this whose act no top tool does, is weak
OBJECT_TERMS = 6  # words only: a request of fewer terms than this, whose act top tools do but to none of the
# things it names that the catalog knows, is weak


class Thresholds(NamedTuple):
    """The rule's thresholds (see the module's docstring); a study may try others."""

    weak_score: float = WEAK_SCORE
    weak_score_blended: float = WEAK_SCORE_BLENDED
    weak_similarity: float = WEAK_SIMILARITY
    unrelated: float = UNRELATED
    far: float = FAR
    known: float = KNOWN
    known_words: float = KNOWN_WORDS
    strong: float = STRONG
    short: int = SHORT
    act_terms: int = ACT_TERMS
    object_terms: int = OBJECT_TERMS


SHIPPED = Thresholds()


class Signals(NamedTuple):
    """What the verdict reads of one ranking (see the module's docstring)."""

    best_words: float  # the best word score as the request wrote it (related words left out)
    named: bool  # the words name the first tool outright
    named_any: bool  # the words name some tool outright
    cover_first: float  # the rarity-weighted share of the request the first tool holds
    unexplained: float  # the rarity-weighted share no tool holds and the model relates to nothing
    known: float  # the rarity-weighted share some tool holds as written or with a typo
    terms: int  # the request's terms
    model: bool  # the model's evidence is there; the two below are 0 without it
    best_similar: float  # the closest tool's cosine
    first_similar: float  # the first tool's cosine
    act: bool  # the request opens with an act the lexicon knows (`actions.request_action`)
    act_done: bool  # one of the first `actions.ACTS` tools does that act
    object_held: bool  # one of those tools doing it holds another word of the request the catalog knows (or there is none)


def signals(lexical: LexicalIndex, query: Query, words: Evidence, similar: Sequence[float] | None,
            related: Related | None, chosen: Sequence[int]) -> Signals:
    """The evidence of a ranking: `chosen` is its order (tool positions), never empty."""
    first = chosen[0]
    held = lexical.term_cover(query, (first,), related)
    best_words = max((words.plain.get(i, 0.0) for i in chosen), default=0.0)
    lexical_part = (best_words, first in words.outright, bool(words.outright), held.covered[first], held.unexplained,
                    held.known, held.terms)
    acted = _acted(lexical, query, chosen[:ACTS])
    if not similar:
        return Signals(*lexical_part, False, 0.0, 0.0, *acted)
    return Signals(*lexical_part, True, max(similar[i] for i in chosen), similar[first], *acted)


def _acted(lexical: LexicalIndex, query: Query, top: Sequence[int]) -> tuple[bool, bool, bool]:
    """(the request opens with an act the lexicon knows, one of the `top` tools does it,
    one of those holds another of the request's words the catalog knows or there is none)."""
    families, verb = request_action(query.plain)
    if not families:
        return False, True, True
    doers = [i for i in top if families & lexical.acts(i)]
    vocabulary = lexical.vocabulary()
    said = {stem(part) for part in verb.split()}
    objects = [term for term, _ in query.terms if term not in said and term in vocabulary]
    held = not objects or any(lexical.holds(i, word) for i in doers for term in objects
                              for word in (term, *english_synonyms(term)))
    return True, bool(doers), held


def unsure(seen: Signals, rule: Thresholds = SHIPPED) -> bool:
    """True when nothing fits the request well enough to say so."""
    if _act_undone(seen, rule):
        return True
    scattered = not seen.named_any and seen.terms < rule.short and seen.best_words >= rule.strong
    if not seen.model:
        unknown = not seen.named and seen.terms < rule.short and seen.known < rule.known_words
        return seen.best_words < rule.weak_score or scattered or unknown
    if seen.best_words < rule.weak_score_blended and seen.best_similar < rule.weak_similarity:
        return True
    if seen.named:
        return False
    far_and_unknown = seen.best_similar < rule.far and seen.known < rule.known
    return scattered or far_and_unknown or seen.first_similar < rule.unrelated


def _act_undone(seen: Signals, rule: Thresholds) -> bool:
    """A short request that names no tool outright and opens with an act no top tool does
    (or that the tools doing it do to none of the things the request names)."""
    if not seen.act or seen.named:
        return False
    if not seen.act_done:
        return seen.terms < rule.act_terms
    return not seen.model and not seen.object_held and seen.terms < rule.object_terms
