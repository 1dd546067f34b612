"""The word index: each tool's stems field by field, and a field-weighted score.

Owns what a tool is made of for search (its name; title; input-schema property names,
texts and enum values at any depth; description; the shapes of values its fields take),
what a query term counts as (itself; a one-edit typo; a word it starts or that starts it;
an English synonym; the English words of a foreign word), and the score: per query term
its best-counting match (field weight x how much it counts x how rare it is), summed,
plus a bonus when the query holds every word of a tool's name. Ranking is
deterministic: equal scores keep catalog order. It also owns the texts a sentence model
reads of a tool (`tool_text`, its one passage; `tool_passages`, its short ones), drawn
from the same fields.

An index is built lazily, on its first query (each tool's fields, and per tool each word's
best field weight), and kept for as long as the listing that owns it. Queries may come from worker threads: every lazily built part is assigned whole,
its readiness flag last.
"""

from __future__ import annotations

import functools
import math
from bisect import bisect_left
from collections.abc import Sequence
from typing import Any, NamedTuple

from sidecar.catalog.merge import CatalogEntry
from sidecar.catalog.search.actions import tool_actions
from sidecar.catalog.search.lexicon import english_synonyms, translations
from sidecar.catalog.search.related import RELATED_ASKED, Related, related_options
from sidecar.catalog.search.shapes import MARK, abbreviates, query_shapes, schema_shapes
from sidecar.catalog.search.summary import split_description
from sidecar.catalog.search.text import fold, is_cjk, name_stems, plain_words, prose_stems, query_words, stem

__all__ = ["PASSAGES", "VALUE_PASSAGES", "Evidence", "LexicalIndex", "Query", "TermCover", "parse_query", "tool_passages", "tool_text"]

# Field weights: a word in a tool's name says most about what the tool does.
NAME, TITLE, SHAPE, ENUM, PROPERTY, DESCRIPTION, OPTIONAL_SHAPE, PROPERTY_TEXT = 4.0, 3.0, 2.0, 2.0, 1.5, 1.0, 0.8, 0.5
# The part of a long description after its summary: usage notes, examples, code.
NOTES = 0.5
_RESOURCE = 0.8  # an id's prefix read as the short form of a resource (`pl_` -> playlist_id)
_NEAR = 0.7  # a one-edit typo
_PREFIX = 0.5  # a word that starts the other (config / configuration)
_SYNONYM = 0.6
_TRANSLATED = 0.9  # the English word of a foreign one
_WHOLE_NAME_BONUS = 2.0  # every word of the tool's name is in the query
_SCHEMA_DEPTH = 6
_NESTING = frozenset({"properties", "items", "anyOf", "oneOf", "allOf"})
_PUNCTUATION = "\"'`.,;:!?()[]{}<>="
PASSAGES = 6  # a tool's input texts the sentence model also reads alone, at most
VALUE_PASSAGES = 2  # and its inputs' lists of allowed values, at most
_PASSAGE_SHORTEST = 13  # characters: a shorter input text says little on its own
_VALUES_SHORTEST = 5  # characters of a list of allowed values, joined

Fields = tuple[tuple[float, frozenset[str]], ...]


class Evidence(NamedTuple):
    """What the words say of each tool (by position): its score, the share of the query's
    terms it matched (a related word counts), and whether the words name it outright: every word of its name is
    in the query, or (two terms or more) every term of the query is in its text, each as
    written or with one typo."""

    scores: dict[int, float]
    coverage: dict[int, float]
    outright: frozenset[int]
    plain: dict[int, float]  # the scores without the words the model relates (`related`)


class TermCover(NamedTuple):
    """How much of a request some tools hold: per tool, the share of the request's terms
    (each weighted by its rarity in the catalog; a word no tool holds weighs most) it holds,
    each counted as much as its best match counts (as written 1, a typo 0.7, a synonym
    0.6, a related word at most 0.5); the share no tool holds and nothing relates to; the
    share some tool holds as written or with a typo; the number of terms."""

    covered: dict[int, float]
    unexplained: float
    known: float
    terms: int


class Query(NamedTuple):
    """A request's terms: its stems (with the word each came from), the snake_case field
    names it cites whole, the shapes of its values, and its words as written (the ones the
    catalog does not know are looked up in the lexicon)."""

    terms: tuple[tuple[str, str], ...]
    fields: tuple[str, ...]
    shapes: tuple[str, ...]
    plain: tuple[str, ...]


@functools.lru_cache(maxsize=1 << 10)
def parse_query(query: str) -> Query:
    pairs = query_words(query)
    cited = [t.lower().strip(_PUNCTUATION) for t in query.split() if "_" in t]
    fields = tuple(dict.fromkeys(c for c in cited if c.replace("_", "").isalpha() and not c.startswith("_")))
    return Query(tuple(pairs), fields, query_shapes(query), tuple(plain_words(query)))


class _Schema:
    """What a tool's input schema says, gathered at every depth."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.texts: list[str] = []
        self.enums: list[str] = []
        self.typed: list[tuple[str, str, str, bool]] = []  # (name, text, format, required)


def _schema_walk(schema: object, found: _Schema) -> None:
    stack: list[tuple[object, int]] = [(schema, 0)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, dict) or depth > _SCHEMA_DEPTH:
            continue
        properties = node.get("properties")
        required = node.get("required")
        needed = set(required) if isinstance(required, list) and depth == 0 else set()
        if isinstance(properties, dict):
            for key, prop in properties.items():
                found.names.append(str(key))
                if not isinstance(prop, dict):
                    continue
                own = [t for t in (prop.get("description"), prop.get("title"), prop.get("pattern")) if isinstance(t, str)]
                examples = prop.get("examples")
                if isinstance(examples, list):
                    own += [str(e) for e in examples[:5] if isinstance(e, (str, int))]
                enum = prop.get("enum")
                if isinstance(enum, list):
                    found.enums.append(" ".join(e for e in enum if isinstance(e, str)))
                found.texts.extend(own[:2])
                fmt, kind = prop.get("format"), prop.get("type")
                described = f"{kind if isinstance(kind, str) else ''}:{fmt if isinstance(fmt, str) else ''}"
                found.typed.append((str(key), " ".join(own), described, key in needed))
                if not _NESTING.isdisjoint(prop):
                    stack.append((prop, depth + 1))
        items = node.get("items")
        if isinstance(items, dict):
            stack.append((items, depth + 1))
        for combinator in ("anyOf", "oneOf", "allOf"):
            options = node.get(combinator)
            if isinstance(options, list):
                stack.extend((option, depth + 1) for option in options)


def schema_enums(spec: dict[str, Any]) -> str:
    """Every string enum value of a tool's input schema, at any depth, space-separated."""
    schema = _Schema()
    _schema_walk(spec.get("inputSchema"), schema)
    return " ".join(schema.enums)


@functools.lru_cache(maxsize=1 << 12)
def _texts_stems(texts: tuple[str, ...]) -> frozenset[str]:
    return frozenset().union(*map(prose_stems, texts))


@functools.lru_cache(maxsize=1 << 12)
def _names_stems(names: tuple[str, ...]) -> frozenset[str]:
    return frozenset().union(*map(name_stems, names))


def _tool_fields(entry: CatalogEntry) -> Fields:
    """One tool's stems, field by field, best field first."""
    spec = entry.spec
    schema = _Schema()
    _schema_walk(spec.get("inputSchema"), schema)
    fields = [(NAME, name_stems(entry.name))]
    title = spec.get("title")
    if isinstance(title, str):
        fields.append((TITLE, name_stems(title)))
    description = spec.get("description")
    description = description if isinstance(description, str) else ""
    needed, optional = schema_shapes(schema.typed, description)
    whole = frozenset(n.lower() for n in schema.names if "_" in n)
    fields.append((SHAPE, needed))
    fields.append((ENUM, _texts_stems(tuple(schema.enums))))
    fields.append((PROPERTY, _names_stems(tuple(schema.names)) | whole))
    summary, notes = split_description(description)
    fields.append((DESCRIPTION, prose_stems(summary)))
    fields.append((OPTIONAL_SHAPE, optional))
    fields.append((NOTES, prose_stems(notes)))
    fields.append((PROPERTY_TEXT, _texts_stems(tuple(schema.texts))))
    return tuple(fields)


def tool_text(entry: CatalogEntry) -> str:
    """A tool as one passage of prose, for a sentence model: its name's words, its title,
    its description's summary (a long description's examples would drown it) and its
    input names."""
    spec = entry.spec
    parts = [entry.name.replace("_", " ").replace("-", " ")]
    title, description = spec.get("title"), spec.get("description")
    if isinstance(title, str):
        parts.append(title)
    if isinstance(description, str):
        parts.append(split_description(description)[0])
    schema = _Schema()
    _schema_walk(spec.get("inputSchema"), schema)
    if schema.names:
        parts.append("Inputs: " + ", ".join(n.replace("_", " ") for n in schema.names[:12]) + ".")
    return ". ".join(parts)


def tool_passages(entry: CatalogEntry) -> list[str]:
    """A tool's short passages for a sentence model, beside its whole text, each after the
    tool's name's words: its first input texts (a property's description or title, at any
    depth), then its first lists of an input's allowed values. An input's own words often
    say a need closer to how a person puts it than the summary does (`memory in MB` for a
    request for more RAM; `subscribed unsubscribed` for someone who wants no more mail),
    and a long passage blurs them."""
    schema = _Schema()
    _schema_walk(entry.spec.get("inputSchema"), schema)
    name = entry.name.replace("_", " ").replace("-", " ")
    texts = list(dict.fromkeys(t.strip() for t in schema.texts if len(t.strip()) >= _PASSAGE_SHORTEST))[:PASSAGES]
    values = list(dict.fromkeys(v for v in schema.enums if len(v) >= _VALUES_SHORTEST))[:VALUE_PASSAGES]
    return [f"{name}: {text}" for text in (*texts, *values)]


def _best_weights(fields: Fields) -> dict[str, float]:
    """Each word of a tool with the weight of the best field it is in (built in C: the
    fields are best first, so the worst is laid down first and better ones overwrite)."""
    best: dict[str, float] = {}
    for weight, stems in reversed(fields):
        best.update(dict.fromkeys(stems, weight))
    return best


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


class LexicalIndex:
    """A word index over some catalog entries, built on first use; what a query word
    matches is worked out once per word and kept."""

    def __init__(self, entries: Sequence[CatalogEntry]) -> None:
        self.entries = tuple(entries)
        self._fields: list[Fields] | None = None
        self._names: list[frozenset[str]] = []
        self._hits: dict[str, dict[int, float]] = {}
        self._best: list[dict[str, float]] = []
        self._vocabulary: frozenset[str] | None = None
        self._sorted: list[str] = []
        self._near: dict[str, list[str]] | None = None
        self._last_units: tuple[Query, list[tuple[str, float, list[tuple[str, float]]]]] | None = None
        self._acts: dict[int, frozenset[str]] = {}

    def build(self) -> LexicalIndex:
        if self._fields is None:
            fields = [_tool_fields(e) for e in self.entries]
            self._best = [_best_weights(each) for each in fields]
            self._names = [each[0][1] for each in fields]
            self._fields = fields
        return self

    def _hits_of(self, word: str) -> dict[int, float]:
        """Tool position -> the weight of the best field `word` occurs in (worked out on
        first need, one dict lookup per tool)."""
        hits = self._hits.get(word)
        if hits is None:
            hits = {i: best[word] for i, best in enumerate(self._best) if word in best}
            self._hits[word] = hits
        return hits

    def _idf(self, word: str) -> float:
        return math.log((len(self.entries) + 1) / (len(self._hits_of(word)) + 0.5)) + 0.1

    def _words(self) -> frozenset[str]:
        if self._vocabulary is None:
            assert self._fields is not None
            vocabulary = frozenset().union(*self._best)
            self._sorted = sorted(vocabulary)
            self._vocabulary = vocabulary
        return self._vocabulary

    def _near_words(self, term: str) -> list[str]:
        """Vocabulary words one edit away from `term` (a deletion-neighbourhood lookup)."""
        if self._near is None:
            near: dict[str, list[str]] = {}
            for word in self._sorted:
                if len(word) >= 4 and not word.startswith(MARK):
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

    def expand(self, term: str, written: str = "") -> list[tuple[str, float]]:
        """The vocabulary words a query term counts as, with how much each counts; typos
        are looked for from the stem and from the word as written."""
        self.build()
        vocabulary = self._words()
        if term.startswith(MARK):
            return self._shape_options(term)
        found: dict[str, float] = {}
        if term in vocabulary:
            found[term] = 1.0
        elif not term.isdigit() and max(len(term), len(written)) >= 4:
            # The stem can be shorter than the word (`mege` -> `meg`): look from both.
            near = set(self._near_words(term)) if len(term) >= 4 or len(written) >= 4 else set()
            if written and written != term and len(written) >= 4:
                near.update(self._near_words(written))
            found.update(dict.fromkeys(sorted(near), _NEAR))
        if len(term) >= 4 and not term.isdigit():
            for word in self._prefixed(term):
                found.setdefault(word, _PREFIX)
        for word in sorted(english_synonyms(term)):
            if word in vocabulary:
                found.setdefault(word, _SYNONYM)
        return list(found.items())

    def _shape_options(self, shape: str) -> list[tuple[str, float]]:
        vocabulary = self._words()
        found = [(shape, 1.0)] if shape in vocabulary else []
        if shape.startswith(f"{MARK}id:"):
            prefix = shape.removeprefix(f"{MARK}id:")
            found += [(r, _RESOURCE) for r in self._resources() if abbreviates(prefix, r.removeprefix(f"{MARK}res:"))]
        return found

    def _resources(self) -> list[str]:
        self._words()
        start = bisect_left(self._sorted, f"{MARK}res:")
        found = []
        for word in self._sorted[start:]:
            if not word.startswith(f"{MARK}res:"):
                break
            found.append(word)
        return found

    def vocabulary(self) -> frozenset[str]:
        """Every stem (and shape mark) the catalog's tools hold."""
        return self.build()._words()

    def acts(self, position: int) -> frozenset[str]:
        """The act families the tool at `position` does (`actions.tool_actions`), worked out on first need."""
        found = self._acts.get(position)
        if found is None:
            entry = self.entries[position]
            description = entry.spec.get("description")
            found = tool_actions(entry.name, description if isinstance(description, str) else "",
                                 schema_enums(entry.spec))
            self._acts[position] = found
        return found

    def holds(self, position: int, term: str) -> bool:
        """True when the tool at `position` holds the stem `term` in any field."""
        return term in self.build()._best[position]

    def unknown_terms(self, query: Query) -> dict[str, str]:
        """The request's stems the catalog does not hold, with their words as written (plain
        words only: values and numbers have shapes instead): what the model may relate."""
        vocabulary = self.build()._words()
        unknown = [(t, w) for t, w in query.terms if t not in vocabulary and w.isalpha() and (len(w) >= 3 or is_cjk(w))]
        return dict(unknown[:RELATED_ASKED])

    def _units(self, query: Query) -> list[tuple[str, float, list[tuple[str, float]]]]:
        """(term, how much it counts, what it matches) for every part of a query; the last
        query's are kept (the score and the verdict both read them)."""
        last = self._last_units
        if last is not None and last[0] is query:
            return last[1]
        units = self._make_units(query)
        self._last_units = (query, units)  # assigned whole: queries may come from worker threads
        return units

    def _make_units(self, query: Query) -> list[tuple[str, float, list[tuple[str, float]]]]:
        vocabulary = self._words()
        units = [(t, 1.0, self.expand(t, w)) for t, w in query.terms]
        units += [(f, 1.0, [(f, 1.0)] if f in vocabulary else []) for f in query.fields]
        units += [(s, 1.0, self._shape_options(s)) for s in query.shapes]
        known = {t for t, _, _ in units}
        unknown = [w for w in query.plain if stem(fold(w)) not in vocabulary]
        for english in translations(unknown):
            if english not in known:
                known.add(english)
                options = [(english, 1.0)] if english in vocabulary else self.expand(english)
                units.append((english, _TRANSLATED, options))
        return units

    def term_cover(self, query: Query, tools: Sequence[int], related: Related | None = None) -> TermCover:
        """What share of `query` each of `tools` (positions) holds (see `TermCover`)."""
        self.build()
        vocabulary = self._words()
        rarest = math.log((len(self.entries) + 1) / 0.5) + 0.1  # what a word no tool holds would weigh
        covered = dict.fromkeys(tools, 0.0)
        total = unexplained = known = 0.0
        units = self._units(query)
        for term, weight, options in units:
            rarity = weight * (min(self._idf(term), rarest) if term in vocabulary else rarest)
            total += rarity
            matches = [*options, *(related_options(term, options, related) if related else ())]
            if not matches:
                unexplained += rarity
                continue
            if any(factor >= _NEAR for _, factor in options):
                known += rarity
            for index in tools:
                held = self._best[index]
                covered[index] += rarity * max((factor for word, factor in matches if word in held), default=0.0)
        if not total:
            return TermCover(covered, 0.0, 0.0, 0)
        shares = {i: value / total for i, value in covered.items()}
        return TermCover(shares, unexplained / total, known / total, len(units))

    def scores(self, query: Query) -> tuple[dict[int, float], dict[int, float]]:
        """Per tool position, the query's score (tools that share nothing are left out),
        and the share of the query's terms the tool matched."""
        found = self.evidence(query)
        return found.scores, found.coverage

    def evidence(self, query: Query, related: Related | None = None) -> Evidence:
        """The scores, the coverage, and the tools the words name outright; `related`
        (from the model) adds catalog words close in meaning to the request's unknown ones
        to the scores, but not to `plain` (what the verdict reads)."""
        self.build()
        scores: dict[int, float] = {}
        plain: dict[int, float] = {}
        covered: dict[int, float] = {}
        strict: dict[int, int] = {}  # per tool, the query's full terms it matched as written or with one typo
        units = self._units(query)
        total = sum(1.0 for _, weight, _ in units if weight >= 1.0) or 1.0
        matched: set[str] = set()
        written: set[str] = set()  # as `matched`, without the words of a translation
        for term, weight, options in units:
            close = {w for w, factor in options if factor >= _NEAR}
            matched.update(close)
            if weight >= 1.0:
                written.update(close)
            best = self._unit_best(term, weight, options)
            for index, value in best.items():
                plain[index] = plain.get(index, 0.0) + value
            extra = related_options(term, options, related) if related else []
            if extra:
                for index, value in self._unit_best(term, weight, extra).items():
                    best[index] = max(best.get(index, 0.0), value)
            for index, value in best.items():
                scores[index] = scores.get(index, 0.0) + value
                covered[index] = min(covered.get(index, 0.0) + weight / total, 1.0)
            if weight >= 1.0:
                for index in {i for word in close for i in self._hits_of(word)}:
                    strict[index] = strict.get(index, 0) + 1
        for index in scores:
            if self._names[index] and self._names[index] <= matched:
                bonus = _WHOLE_NAME_BONUS * len(self._names[index])
                scores[index] += bonus
                plain[index] += bonus
        named = {i for i in scores if self._names[i] and self._names[i] <= written}
        every = {i for i, count in strict.items() if count >= total >= 2}
        return Evidence(scores, covered, frozenset(named | every), plain)

    def _unit_best(self, term: str, weight: float, options: list[tuple[str, float]]) -> dict[int, float]:
        """Per tool, what one query term's best-counting match gives."""
        # A stand-in word (typo, prefix, synonym) never counts for more than the word itself.
        ceiling = self._idf(term) if term in self._words() else float("inf")
        best: dict[int, float] = {}
        for word, factor in options:
            rarity = weight * factor * min(self._idf(word), ceiling)
            for index, field in self._hits_of(word).items():
                if field * rarity > best.get(index, 0.0):
                    best[index] = field * rarity
        return best
