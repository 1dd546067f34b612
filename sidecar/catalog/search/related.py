"""Catalog words close in meaning to a request's words the catalog does not know.

Owns a bridge from the sentence model to the word index. A request often says a thing in
words no tool uses: a foreign word the lexicon lacks, slang, another product's term. With
the `[semantic]` extra, every word of the catalog's tool names and description summaries
is embedded once (in the model's worker, cached on disk like the tool vectors), and each
request word the word index does not know is embedded beside the request and matched to
its nearest catalog words. Those count in the word score as weak matches: at most
`RELATED_FACTOR` of a match, times their similarity, so a word the catalog uses as written
always counts for more, and they never make the words name a tool outright. The words
come from the catalog itself, so the bridge adapts to each catalog and holds no list of
its own. Runs only on the semantic path (numpy comes with its extra).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sidecar.catalog.merge import CatalogEntry
from sidecar.catalog.search.summary import split_description
from sidecar.catalog.search.text import STOP, stem, words

__all__ = ["RELATED_ASKED", "RELATED_FACTOR", "RELATED_PER_WORD", "RELATED_SIMILARITY", "Related", "RelatedWords", "catalog_words",
           "related_options"]

RELATED_SIMILARITY = 0.5  # the least cosine similarity of a word to a catalog word
RELATED_PER_WORD = 2  # catalog words one request word may stand for
RELATED_FACTOR = 0.5  # how much a related word counts, times its similarity (a typo counts 0.7)
RELATED_ASKED = 16  # unknown request words looked up, at most (each costs the model a few tokens)
_SHORTEST = 3  # catalog words shorter than this say too little alone

Related = Mapping[str, Sequence[tuple[str, float]]]  # request stem -> (catalog stem, similarity)


def catalog_words(entries: Sequence[CatalogEntry]) -> dict[str, str]:
    """Each plain word of the tools' names and description summaries, with its stem, in
    first-seen order (the examples and notes after a summary are left out: they carry the
    words of other things)."""
    found: dict[str, str] = {}
    for entry in entries:
        description = entry.spec.get("description")
        summary = split_description(description)[0] if isinstance(description, str) else ""
        for word in words(f"{entry.name} {summary}"):
            if len(word) >= _SHORTEST and word.isalpha() and word not in STOP:
                found.setdefault(word, stem(word))
    return found


def related_options(term: str, options: list[tuple[str, float]], related: Related) -> list[tuple[str, float]]:
    """Up to `RELATED_PER_WORD` catalog words `related` gives for a request's `term` that its
    `options` (what the word index matches it to) do not hold already, with how much each
    counts."""
    held = {word for word, _ in options}
    added = [(word, RELATED_FACTOR * similarity) for word, similarity in related.get(term, ()) if word not in held]
    return added[:RELATED_PER_WORD]


class RelatedWords:
    """The catalog's words and their unit vectors, and the nearest of them to a word."""

    def __init__(self, stems: Sequence[str], matrix: Any) -> None:
        self.stems = tuple(stems)
        self.matrix = matrix  # one unit row per word, in the order of `stems`

    def nearest(self, asked: Mapping[str, Any], known: frozenset[str]) -> dict[str, tuple[tuple[str, float], ...]]:
        """For each request stem (with its word's vector), the closest catalog stems at
        least `RELATED_SIMILARITY` close, best first, itself and words the word index does
        not hold left out: a few more than `RELATED_PER_WORD`, as the word index skips
        those it already matches another way."""
        found: dict[str, tuple[tuple[str, float], ...]] = {}
        if not self.stems or not asked:
            return found
        terms = list(asked)
        similar = self.matrix @ _stacked(self.matrix, [asked[t] for t in terms])  # one product for every word
        take = min(RELATED_PER_WORD * 3, len(self.stems))
        for column, term in enumerate(terms):
            values = similar[:, column]
            best = values.argpartition(-take)[-take:]
            picked: dict[str, float] = {}
            for position in sorted(best.tolist(), key=lambda p: -float(values[p])):
                value = float(values[position])
                near = self.stems[position]
                if value >= RELATED_SIMILARITY and near != term and near in known:
                    picked.setdefault(near, value)
            if picked:
                found[term] = tuple(picked.items())
        return found


def _stacked(like: Any, vectors: list[Any]) -> Any:
    """The vectors as the columns of one matrix of `like`'s array type."""
    import numpy  # the model's extra brings it; this module runs only on its path

    return numpy.stack(vectors, axis=1).astype(like.dtype, copy=False)
