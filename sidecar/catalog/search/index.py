"""The one ranker behind every search tool (`find_tool`, a trio's search, `mcp_search_tools`).

Owns the blend and the verdict. Lexical scores (always) and, when the semantic extra is
installed and its vectors are ready, sentence-model similarities are each normalised to
0..1 over the catalog and mixed with fixed weights; ranking is deterministic (equal
scores keep catalog order). A ranking is "weak" when the best tool matches less than half
of the request's terms and, with the model, is not close in meaning either: the answer then
tells the model so, so that it can rephrase.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from sidecar.catalog.merge import CatalogEntry
from sidecar.catalog.search import semantic
from sidecar.catalog.search.lexical import LexicalIndex, parse_query

__all__ = ["LEXICAL_WEIGHT", "Ranked", "SearchIndex"]

LEXICAL_WEIGHT = 0.4  # the lexical share of a blended score; the model's is the rest
_WEAK_COVERAGE = 0.5  # the best tool matches less than this share of the request's terms
_WEAK_SIMILARITY = 0.35  # and the model finds it no closer than this (cosine)
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
        parsed = parse_query(query)
        lexical, coverage = self.lexical.scores(parsed)
        similar = self.semantic.scores(query) if self.semantic is not None else None
        scores = _blend(lexical, similar)
        ranked = sorted(scores.items(), key=lambda pair: (-round(pair[1], 9), pair[0]))
        chosen = [i for i, _ in ranked if allowed is None or allowed(self.entries[i].exposed)]
        top = chosen[:limit]
        weak = not top or coverage.get(top[0], 0.0) < _WEAK_COVERAGE
        if weak and similar is not None and top:
            weak = similar[top[0]] < _WEAK_SIMILARITY
        closest = chosen[limit : limit + CLOSEST] if weak else []
        return Ranked([self.entries[i] for i in top], weak, [self.entries[i] for i in closest])


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
