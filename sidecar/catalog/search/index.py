"""The one ranker behind every search tool (`find_tool`, a trio's search, `mcp_search_tools`).

Owns the blend and the words' veto (the verdict's rule is `verdict`'s). Lexical scores
(always) and, when the semantic extra is installed and its vectors are ready,
sentence-model similarities (a tool's whole text mixed with its closest short passage,
`semantic.Looked.closeness`) are each normalised to 0..1 over the catalog and mixed with
fixed weights; ranking is
deterministic (equal scores keep catalog order). With the model, the request's words the
catalog does not know also count, weakly, as the catalog words closest to them in meaning
(`related`). The words are never outvoted: when they
name a tool outright (its whole name, or every term of a request of two terms or more,
allowing a typo a word) the best such tool stays first whatever the model scores; the
model re-sorts the rest. A ranking is "weak" (the answer says none fits well) by
`verdict.unsure` over what the ranking worked out (`verdict.Signals`, which read the whole
texts' similarity); its thresholds are re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from sidecar.catalog.merge import CatalogEntry
from sidecar.catalog.search import semantic, verdict
from sidecar.catalog.search.lexical import Evidence, LexicalIndex, parse_query
from sidecar.catalog.search.verdict import UNRELATED, WEAK_SCORE, WEAK_SCORE_BLENDED, WEAK_SIMILARITY

__all__ = ["LEXICAL_WEIGHT", "UNRELATED", "WEAK_SCORE", "WEAK_SCORE_BLENDED", "WEAK_SIMILARITY", "Ranked", "SearchIndex"]

LEXICAL_WEIGHT = 0.4  # the lexical share of a blended score; the model's is the rest
CLOSEST = 10  # names offered beyond the answer when the match is weak


class Ranked(NamedTuple):
    found: list[CatalogEntry]
    weak: bool
    closest: list[CatalogEntry]  # the next best names, for a weak answer


class SearchIndex:
    """Search over some catalog entries: lexical always, blended with the model's
    similarity when the `[semantic]` extra is there and ready."""

    def __init__(self, entries: Sequence[CatalogEntry], use_model: bool | None = None) -> None:
        self.entries = tuple(entries)
        self.lexical = LexicalIndex(self.entries)
        wanted = semantic.enabled() if use_model is None else use_model
        self.semantic = semantic.SemanticIndex(self.entries) if wanted and self.entries else None
        self.summary: str | None = None  # the area summary a weak answer carries, made on first need

    def build(self) -> SearchIndex:
        self.lexical.build()
        return self

    def search(self, query: str, limit: int, allowed: Callable[[str], bool] | None = None) -> list[CatalogEntry]:
        """The best `limit` entries for `query` (only those `allowed` by engine-visible name)."""
        return self.rank(query, limit, allowed).found

    def rank(self, query: str, limit: int, allowed: Callable[[str], bool] | None = None) -> Ranked:
        chosen, seen = self.order(query, allowed)
        top = chosen[:limit]
        weak = not top or seen is None or verdict.unsure(seen)
        closest = chosen[limit : limit + CLOSEST] if weak else []
        return Ranked([self.entries[i] for i in top], weak, [self.entries[i] for i in closest])

    def order(self, query: str,
              allowed: Callable[[str], bool] | None = None) -> tuple[list[int], verdict.Signals | None]:
        """Every tool that scores, best first (positions), and what the verdict reads of
        that order (None when nothing scores)."""
        parsed = parse_query(query)
        looked = None
        if self.semantic is not None:
            looked = self.semantic.look(query, self.lexical.unknown_terms(parsed), self.lexical.vocabulary())
        related = looked.related if looked is not None else None
        words = self.lexical.evidence(parsed, related)
        similar = looked.similar if looked is not None else None
        closeness = (looked.closeness or looked.similar) if looked is not None else None
        scores = _blend(words.scores, closeness)
        ranked = sorted(scores.items(), key=lambda pair: (-round(pair[1], 9), pair[0]))
        chosen = [i for i, _ in ranked if allowed is None or allowed(self.entries[i].exposed)]
        if similar is not None:
            chosen = _words_first(chosen, words)
        if not chosen:
            return chosen, None
        return chosen, verdict.signals(self.lexical, parsed, words, similar, related, chosen)


def _words_first(chosen: list[int], words: Evidence) -> list[int]:
    """The ranking with the best tool the words name outright moved to the front."""
    named = [i for i in chosen if i in words.outright]
    if not named:
        return chosen
    first = max(named, key=lambda i: (words.plain.get(i, 0.0), -chosen.index(i)))  # as written, not related
    return [first, *(i for i in chosen if i != first)]


def _blend(lexical: dict[int, float], similar: list[float] | None) -> dict[int, float]:
    if similar is None:
        return lexical
    best = max(lexical.values(), default=0.0)
    low, high = min(similar), max(similar)
    spread = high - low or 1.0
    blended = {}
    for index, value in enumerate(similar):
        share = lexical.get(index, 0.0) / best if best > 0 else 0.0
        blended[index] = LEXICAL_WEIGHT * share + (1 - LEXICAL_WEIGHT) * (value - low) / spread
    return blended
