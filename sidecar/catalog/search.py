"""Word search over tools: the index behind `find_tool` and the trios' search tools.

Owns tokenizing (names split on `_`, `-`, `.` and case changes; descriptions; input-schema
property names, descriptions and enum values), a light stemmer that folds plural and
inflected forms, one-edit typo matching, prefix matching, a few verb synonyms, and a
field-weighted score. Ranking is deterministic: equal scores keep catalog order.
Refuses meaning: a request that shares no word (or near-word) with a tool finds nothing.

An index is built lazily, on its first query, from the entries it was given, and then
kept for as long as the listing that owns it (one catalog version). Queries may come from
worker threads: every lazily built part is assigned whole, its readiness flag last.

The local answers built on it (`answer_meta`, `resolve_meta_call`) live in `answers` and
are re-exported here.
"""

from __future__ import annotations

import functools
import math
import re
from bisect import bisect_left
from collections.abc import Callable, Sequence

from sidecar.catalog.answers import answer_meta, resolve_meta_call
from sidecar.catalog.merge import CatalogEntry

__all__ = ["SearchIndex", "answer_meta", "query_terms", "resolve_meta_call", "stem", "words"]

_WORD = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_HAS_UPPER = re.compile(r"[A-Z]")

# Field weights: a word in a tool's name says most about what the tool does.
NAME, TITLE, PROPERTY, DESCRIPTION, PROPERTY_TEXT = 4.0, 3.0, 1.5, 1.0, 0.5
_NEAR = 0.7  # a one-edit typo
_PREFIX = 0.5  # a word that starts the other (config / configuration)
_SYNONYM = 0.6
_WHOLE_NAME_BONUS = 2.0  # every word of the tool's name is in the query
_SCHEMA_DEPTH = 6
_NESTING = frozenset({"properties", "items", "anyOf", "oneOf", "allOf"})

_STOP = frozenset(
    "a an and any are as at be by can could do does for from has have how i in into is it its "
    "me my of on or our please should some that the their them then this to tool tools was we "
    "what when where which who will with would you your".split()
)
_UNSTEMMED = frozenset(
    "string thing nothing something anything everything during bring king ring wing ping sing "
    "spring morning evening ceiling status address access alias canvas news series".split()
)
# Verbs people use for the same action; matched at a lower weight than the word itself.
_SYNONYM_GROUPS = (
    ("list", "show", "view", "browse", "enumerate"),
    ("get", "fetch", "read", "retrieve", "show", "view", "open", "look"),
    ("create", "add", "make", "new", "start", "open"),
    ("update", "change", "edit", "modify", "rename", "set"),
    ("delete", "remove", "erase", "drop", "destroy"),
    ("search", "find", "lookup", "query"),
    ("send", "post", "message", "notify"),
    ("cancel", "stop", "abort", "void"),
    ("invite", "add"),
)


def _undouble(word: str) -> str:
    if len(word) > 2 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        return word[:-1]
    return word


@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """Fold a lowercase word to a stem shared by its plural and inflected forms."""
    w = word
    if len(w) <= 3 or not w.isalpha() or w in _UNSTEMMED:
        return w
    if w.endswith(("ies", "ied")) and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif w.endswith(("ches", "shes", "xes", "zes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if w.endswith("ing") and len(w) >= 5:
        w = _undouble(w[:-3])
    elif w.endswith("ed") and len(w) >= 4:
        w = _undouble(w[:-2])
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return w


def _split_case(token: str) -> list[str]:
    return _CAMEL.findall(token) if _HAS_UPPER.search(token) else [token]


@functools.lru_cache(maxsize=1 << 16)
def _name_stems(name: str) -> frozenset[str]:
    parts = [p.lower() for token in _WORD.findall(name) for p in _split_case(token)]
    return frozenset(stem(p) for p in parts if p not in _STOP or len(parts) == 1)


def words(text: str) -> list[str]:
    """The lowercase words of `text`, split on punctuation and case changes, in order."""
    return [p.lower() for token in _WORD.findall(text) for p in _split_case(token)]


def query_terms(query: str) -> list[str]:
    """The distinct stems of a query, in order, stop words left out (unless that is all)."""
    found = words(query)
    kept = [w for w in found if w not in _STOP] or found
    return list(dict.fromkeys(stem(w) for w in kept))


@functools.lru_cache(maxsize=1 << 14)
def _sentence_stems(sentence: str) -> frozenset[str]:
    # Prose is lowered whole: its case changes are not identifiers.
    return frozenset(map(stem, set(_WORD.findall(sentence.lower()))))


# Catalogs repeat themselves (shared parameters, boilerplate sentences, the same tool in
# the next catalog version), so stems are kept per sentence, per text and per name list.
@functools.lru_cache(maxsize=1 << 13)
def _prose_stems(text: str) -> frozenset[str]:
    found: set[str] = set()
    for sentence in text.split(". "):
        found.update(_sentence_stems(sentence))
    return frozenset(found)


@functools.lru_cache(maxsize=1 << 12)
def _texts_stems(texts: tuple[str, ...]) -> frozenset[str]:
    return frozenset().union(*map(_prose_stems, texts))


@functools.lru_cache(maxsize=1 << 12)
def _names_stems(names: tuple[str, ...]) -> frozenset[str]:
    return frozenset().union(*map(_name_stems, names))


def _schema_walk(schema: object, names: list[str], texts: list[str]) -> None:
    """Collect every property name and every property's text, nested ones too."""
    stack: list[tuple[object, int]] = [(schema, 0)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, dict) or depth > _SCHEMA_DEPTH:
            continue
        properties = node.get("properties")
        if isinstance(properties, dict):
            for key, prop in properties.items():
                names.append(str(key))
                if not isinstance(prop, dict):
                    continue
                for text in (prop.get("description"), prop.get("title")):
                    if isinstance(text, str):
                        texts.append(text)
                enum = prop.get("enum")
                if isinstance(enum, list):
                    texts.append(" ".join(e for e in enum if isinstance(e, str)))
                if not _NESTING.isdisjoint(prop):
                    stack.append((prop, depth + 1))
        items = node.get("items")
        if isinstance(items, dict):
            stack.append((items, depth + 1))
        for combinator in ("anyOf", "oneOf", "allOf"):
            options = node.get(combinator)
            if isinstance(options, list):
                stack.extend((option, depth + 1) for option in options)


Fields = tuple[tuple[float, frozenset[str]], ...]


def _tool_fields(entry: CatalogEntry) -> Fields:
    """One tool's stems, field by field, best field first."""
    spec = entry.spec
    names: list[str] = []
    texts: list[str] = []
    _schema_walk(spec.get("inputSchema"), names, texts)
    fields = [(NAME, _name_stems(entry.name))]
    title = spec.get("title")
    if isinstance(title, str):
        fields.append((TITLE, _name_stems(title)))
    fields.append((PROPERTY, _names_stems(tuple(names))))
    description = spec.get("description")
    if isinstance(description, str):
        fields.append((DESCRIPTION, _prose_stems(description)))
    fields.append((PROPERTY_TEXT, _texts_stems(tuple(texts))))
    return tuple(fields)


def _deletions(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


def _one_edit(a: str, b: str) -> bool:
    """True when `a` and `b` differ by one insertion, deletion, substitution or swap."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diffs = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diffs) == 1:
            return True
        i, j = diffs[0], diffs[-1]
        return len(diffs) == 2 and j == i + 1 and a[i] == b[j] and a[j] == b[i]
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def _synonyms(term: str) -> set[str]:
    found: set[str] = set()
    for group in _SYNONYM_GROUPS:
        stems = [stem(w) for w in group]
        if term in stems:
            found.update(stems)
    found.discard(term)
    return found


class SearchIndex:
    """A word index over some catalog entries: each tool's stems field by field, built on
    first use; what a query word matches is worked out once per word and kept."""

    def __init__(self, entries: Sequence[CatalogEntry]) -> None:
        self.entries = tuple(entries)
        self._fields: list[Fields] | None = None
        self._names: list[frozenset[str]] = []
        self._hits: dict[str, dict[int, float]] = {}
        self._vocabulary: frozenset[str] | None = None
        self._sorted: list[str] = []
        self._near: dict[str, list[str]] | None = None

    def build(self) -> SearchIndex:
        if self._fields is None:
            fields = [_tool_fields(e) for e in self.entries]
            self._names = [each[0][1] for each in fields]
            self._fields = fields
        return self

    def _hits_of(self, word: str) -> dict[int, float]:
        """Tool position -> the weight of the best field `word` occurs in."""
        hits = self._hits.get(word)
        if hits is None:
            assert self._fields is not None
            hits = {}
            for index, fields in enumerate(self._fields):
                for weight, stems in fields:
                    if word in stems:
                        hits[index] = weight
                        break
            self._hits[word] = hits
        return hits

    def _idf(self, word: str) -> float:
        return math.log((len(self.entries) + 1) / (len(self._hits_of(word)) + 0.5)) + 0.1

    def _words(self) -> frozenset[str]:
        if self._vocabulary is None:
            assert self._fields is not None
            distinct = {id(stems): stems for fields in self._fields for _, stems in fields}
            vocabulary = frozenset().union(*distinct.values())
            self._sorted = sorted(vocabulary)
            self._vocabulary = vocabulary
        return self._vocabulary

    def _near_words(self, term: str) -> list[str]:
        """Vocabulary words one edit away from `term` (a deletion-neighbourhood lookup)."""
        if self._near is None:
            near: dict[str, list[str]] = {}
            for word in self._sorted:
                if len(word) >= 4:
                    for key in _deletions(word) | {word}:
                        near.setdefault(key, []).append(word)
            self._near = near
        candidates = {w for key in _deletions(term) | {term} for w in self._near.get(key, ())}
        return sorted(w for w in candidates if _one_edit(term, w))

    def _prefixed(self, term: str) -> list[str]:
        """Vocabulary words that start with `term`, or that `term` starts with (4+ letters)."""
        vocabulary = self._words()
        found = [term[:n] for n in range(4, len(term)) if term[:n] in vocabulary]
        start = bisect_left(self._sorted, term)
        for word in self._sorted[start : start + 50]:
            if not word.startswith(term):
                break
            if word != term:
                found.append(word)
        return found

    def expand(self, term: str) -> list[tuple[str, float]]:
        """The vocabulary words a query term counts as, with how much each counts."""
        self.build()
        vocabulary = self._words()
        found: dict[str, float] = {}
        if term in vocabulary:
            found[term] = 1.0
        elif len(term) >= 4:
            found.update(dict.fromkeys(self._near_words(term), _NEAR))
        if len(term) >= 4:
            for word in self._prefixed(term):
                found.setdefault(word, _PREFIX)
        for word in sorted(_synonyms(term)):
            if word in vocabulary:
                found.setdefault(word, _SYNONYM)
        return list(found.items())

    def search(self, query: str, limit: int, allowed: Callable[[str], bool] | None = None) -> list[CatalogEntry]:
        """The best `limit` entries for `query` (only those `allowed` by engine-visible name)."""
        self.build()
        terms = query_terms(query)
        scores = self._scores(terms, [self.expand(t) for t in terms])
        ranked = sorted(scores.items(), key=lambda pair: (-round(pair[1], 9), pair[0]))
        chosen: list[CatalogEntry] = []
        for index, _ in ranked:
            entry = self.entries[index]
            if allowed is None or allowed(entry.exposed):
                chosen.append(entry)
                if len(chosen) == limit:
                    break
        return chosen

    def _scores(self, terms: list[str], expansions: list[list[tuple[str, float]]]) -> dict[int, float]:
        """Per tool: for each query term, its best-counting match (field weight x how much
        the word counts x how rare it is), summed; plus a bonus when the query holds every
        word of the tool's name."""
        scores: dict[int, float] = {}
        for term, options in zip(terms, expansions):
            # A stand-in word (typo, prefix, synonym) never counts for more than the word itself.
            ceiling = self._idf(term) if term in self._words() else float("inf")
            best: dict[int, float] = {}
            for word, factor in options:
                rarity = factor * min(self._idf(word), ceiling)
                for index, weight in self._hits_of(word).items():
                    if weight * rarity > best.get(index, 0.0):
                        best[index] = weight * rarity
            for index, value in best.items():
                scores[index] = scores.get(index, 0.0) + value
        query = set(terms) | {w for options in expansions for w, factor in options if factor >= _NEAR}
        for index in scores:
            name = self._names[index]
            if name and name <= query:
                scores[index] += _WHOLE_NAME_BONUS * len(name)
        return scores
