"""The verdict study: can a calibrated rule over several features tell "nothing fits" better
than the shipped one, on catalogs it was not fitted on?

    python -m bench.search_unsure                  # prints the table
    python -m bench.search_unsure --docs DIR       # and writes search-unsure-cv.json/.md (bench.doc_files)

Owns the features of one ranked request (the best word score, the second's share of it,
the share of the request's terms the best word match covers, the number of terms, and
with the model the best cosine similarity and its gap to the fifth), a logistic rule fitted
on them, and its test: leave one catalog out. The answerable and unanswerable queries of
both development sets are pooled; each fold fits the rule on every other catalog (the five
shared catalogs, the npm reference servers' lists, the merged real catalogs), sets its
threshold so that at most 10% of the training folds' answerable queries are marked
unsure, and marks the held-out catalog's queries. The shipped rule
(`sidecar.catalog.search.index`) is scored on the same queries beside it. Needs numpy (the
`[semantic]` extra brings it).

With the model it also cross-validates the threshold of the shipped rule's second clause
(the first tool is not named outright and the model finds it unrelated, cosine under
`UNRELATED`): each fold takes, from a grid, the largest threshold that marks at most one
point more of each training set's answerable queries than the first clause alone, and
marks the held-out catalog with it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from collections.abc import Callable
from typing import Any

from bench import real_set
from bench import search as bench_search

WRITER = "bench.search_unsure"
ANSWERABLE_UNSURE = 0.10  # the most answerable queries a threshold may mark unsure (training folds)
WORD_FEATURES = ("best word score", "second's share", "terms covered", "terms")
MODEL_FEATURES = ("best similarity", "gap to the fifth")
# Added in the third round (issue 25): the share of the request's terms, each weighted by its
# rarity in the catalog, that the best tool matches; the share (same weights) that neither
# matches any tool nor, with the model, relates to a catalog word; the best similarity as a
# z-score over the catalog's tools; and whether the model's closest tool is among the words' best three.
MORE_WORD_FEATURES = ("rare terms covered", "terms unexplained")
MORE_MODEL_FEATURES = ("similarity z-score", "model's best in the words' top three")


def _term_shares(index: Any, parsed: Any, best: int | None, related: Any) -> tuple[float, float]:
    """(the idf-weighted share of the request's terms that tool `best` matches, the share
    that matches nothing and relates to nothing)."""
    lexical = index.lexical
    vocabulary = lexical.vocabulary()
    rarest = math.log((len(index.entries) + 1) / 0.5) + 0.1  # what a word no tool holds would weigh
    covered = unexplained = total = 0.0
    for term, weight, options in lexical._units(parsed):
        if weight < 1.0:
            continue
        rarity = lexical._idf(term) if term in vocabulary else rarest
        total += rarity
        close = [word for word, factor in options if factor >= 0.7]
        if best is not None and any(best in lexical._hits_of(word) for word in close):
            covered += rarity
        if not options and not related.get(term):
            unexplained += rarity
    return (covered / total, unexplained / total) if total else (0.0, 0.0)


def features(index: Any, query: str) -> tuple[list[float], bool]:
    """(the request's features: `WORD_FEATURES`, `MORE_WORD_FEATURES`, then with the model
    `MODEL_FEATURES` and `MORE_MODEL_FEATURES`; the shipped rule's verdict)."""
    from sidecar.catalog.search.lexical import parse_query
    from sidecar.catalog.search.text import query_terms

    parsed = parse_query(query)
    looked = None
    if index.semantic is not None:
        looked = index.semantic.look(query, index.lexical.unknown_terms(parsed), index.lexical.vocabulary())
    related = looked.related if looked is not None else {}
    words = index.lexical.evidence(parsed, related)
    ranked = index.rank(query, 10)
    scores = sorted(words.plain.values(), reverse=True) + [0.0, 0.0]
    best = max(words.plain, key=lambda i: words.plain[i]) if words.plain else None
    row = [math.log1p(scores[0]), scores[1] / scores[0] if scores[0] else 1.0,
           words.coverage.get(best, 0.0) if best is not None else 0.0, math.log(len(query_terms(query)) + 1)]
    row += _term_shares(index, parsed, best, related)
    if looked is not None:
        similar = looked.similar
        top = sorted(similar, reverse=True)
        mean = sum(similar) / len(similar)
        spread = math.sqrt(sum((v - mean) ** 2 for v in similar) / len(similar)) or 1.0
        words_best = sorted(words.scores, key=lambda i: -words.scores[i])[:3]
        closest = max(range(len(similar)), key=lambda i: similar[i])
        row += [top[0], top[0] - top[min(4, len(top) - 1)], (top[0] - mean) / spread, float(closest in words_best)]
    return row, ranked.weak


def first_tool(index: Any, query: str) -> tuple[bool, float, bool]:
    """(the verdict of the shipped rule's first clause alone, the first tool's similarity,
    whether the words name it outright); with the model only."""
    from sidecar.catalog.search import index as ranking
    from sidecar.catalog.search.lexical import parse_query

    parsed = parse_query(query)
    looked = index.semantic.look(query, index.lexical.unknown_terms(parsed), index.lexical.vocabulary())
    words = index.lexical.evidence(parsed, looked.related)
    found = index.rank(query, 1).found
    first = index.entries.index(found[0]) if found else max(range(len(looked.similar)), key=looked.similar.__getitem__)
    best = max(words.plain.values(), default=0.0)
    alone = not found or (best < ranking.WEAK_SCORE_BLENDED and max(looked.similar) < ranking.WEAK_SIMILARITY)
    return alone, float(looked.similar[first]), first in words.outright


def collect(use_model: bool) -> list[dict[str, Any]]:
    """Every query of both sets: its set, its catalog (the fold), answerable or not, features."""
    dev = bench_search.dev_dir()
    shared = bench_search._queries(dev)
    none_fits = [json.loads(line) for line in (bench_search.OWN_SET / "unanswerable.jsonl").read_text().splitlines()
                 if line.strip()]
    rows: list[dict[str, Any]] = []
    for name in sorted({q["catalog"] for q in shared + none_fits}):
        index = bench_search._index(bench_search._catalog_tools(dev, name), use_model)
        fold = "npm" if name.startswith("npm:") else name.removesuffix(".json")
        for q in (q for q in shared + none_fits if q["catalog"] == name):
            row, weak = features(index, q["query"])
            rows.append({"set": "shared", "fold": fold, "answerable": bool(q["expect"]), "x": row, "shipped": weak,
                         "first": first_tool(index, q["query"]) if use_model else None})
    index = real_set.merged_index(use_model)
    for q in real_set.queries():
        row, weak = features(index, q["query"])
        rows.append({"set": "real", "fold": "real", "answerable": bool(q["expect"]), "x": row, "shipped": weak,
                     "first": first_tool(index, q["query"]) if use_model else None})
    return rows


def _fit(x: Any, y: Any, steps: int = 3000, rate: float = 0.5, l2: float = 0.01) -> Any:
    """Logistic regression by gradient descent, the classes weighted equal."""
    import numpy as np

    x = np.hstack([x, np.ones((len(x), 1))])
    weight = np.where(y == 1, (1 - y).sum() / max(y.sum(), 1), 1.0)
    beta = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-x @ beta))
        beta -= rate * (x.T @ ((p - y) * weight) / weight.sum() + l2 * np.r_[beta[:-1], 0])
    return beta


def _probability(beta: Any, x: Any) -> Any:
    import numpy as np

    return 1 / (1 + np.exp(-(np.hstack([x, np.ones((len(x), 1))]) @ beta)))


def cross_validate(rows: list[dict[str, Any]], columns: list[int]) -> list[bool]:
    """Each query's held-out verdict (True: unsure) from the rule fitted on the other folds,
    over the feature `columns`."""
    import numpy as np

    x = np.array([[r["x"][c] for c in columns] for r in rows])
    x = (x - x.mean(0)) / (x.std(0) + 1e-9)
    y = np.array([0.0 if r["answerable"] else 1.0 for r in rows])
    marked = np.zeros(len(rows), bool)
    for fold in sorted({r["fold"] for r in rows}):
        train = np.array([r["fold"] != fold for r in rows])
        beta = _fit(x[train], y[train])
        answerable = np.sort(_probability(beta, x[train][y[train] == 0]))
        threshold = answerable[math.ceil((1 - ANSWERABLE_UNSURE) * len(answerable)) - 1]
        marked[~train] = _probability(beta, x[~train]) > threshold
    return [bool(m) for m in marked]


UNRELATED_GRID = tuple(round(0.005 * step, 3) for step in range(41))  # 0 .. 0.2
ADDED_ANSWERABLE = 0.011  # the most a threshold may add to a training set's answerable-unsure share


def _first_clause(rows: list[dict[str, Any]], threshold: float) -> list[bool]:
    return [r["first"][0] or (not r["first"][2] and r["first"][1] < threshold) for r in rows]


def unrelated_cv(rows: list[dict[str, Any]]) -> tuple[list[bool], dict[str, float]]:
    """Each query's held-out verdict with the unrelated-first-tool threshold chosen on the
    other folds, and the threshold each fold chose."""
    marked = [False] * len(rows)
    chosen: dict[str, float] = {}
    for fold in sorted({r["fold"] for r in rows}):
        train = [r for r in rows if r["fold"] != fold]
        base = _first_clause(train, 0.0)
        best = 0.0
        for threshold in UNRELATED_GRID:
            added = _first_clause(train, threshold)
            if all(_added(train, base, added, part) <= ADDED_ANSWERABLE for part in ("shared", "real")):
                best = threshold
        chosen[fold] = best
        for position, row in enumerate(rows):
            if row["fold"] == fold:
                marked[position] = _first_clause([row], best)[0]
    return marked, chosen


def _added(rows: list[dict[str, Any]], base: list[bool], added: list[bool], part: str) -> float:
    picked = [(b, a) for r, b, a in zip(rows, base, added) if r["set"] == part and r["answerable"]]
    return (sum(a for _, a in picked) - sum(b for b, _ in picked)) / len(picked) if picked else 0.0


def _rates(rows: list[dict[str, Any]], marked: list[bool]) -> dict[str, dict[str, float]]:
    found: dict[str, dict[str, float]] = {}
    for part in ("shared", "real"):
        for answerable, key in ((True, "answerable"), (False, "none_fits")):
            picked = [m for r, m in zip(rows, marked) if r["set"] == part and r["answerable"] is answerable]
            found.setdefault(part, {})[key] = round(sum(picked) / len(picked), 3) if picked else 0.0
            found[part][f"{key}_n"] = len(picked)
    return found


def _rules(use_model: bool) -> dict[str, list[int]]:
    """Each fitted rule's feature columns (see `features` for their order)."""
    words, more = len(WORD_FEATURES), len(MORE_WORD_FEATURES)
    first = list(range(words))
    added = list(range(words, words + more))
    if not use_model:
        return {"fitted, words": first, "fitted, words + rare terms and unexplained": first + added}
    model = list(range(words + more, words + more + len(MODEL_FEATURES)))
    rest = list(range(words + more + len(MODEL_FEATURES), words + more + len(MODEL_FEATURES) + len(MORE_MODEL_FEATURES)))
    return {"fitted, words and model": first + model,
            "fitted, + rare terms, unexplained, z-score, agreement": first + added + model + rest}


def study(progress: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    modes = [("lexical", False)] + ([("semantic", True)] if bench_search.model_installed() else [])
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        os.environ.setdefault("OMB_SIDECAR_CACHE_DIR", folder)
        for mode, use_model in modes:
            progress(f"search_unsure: {mode}")
            rows = collect(use_model)
            rules = {"shipped": _rates(rows, [r["shipped"] for r in rows])}
            if use_model:
                rules["shipped, first clause alone"] = _rates(rows, _first_clause(rows, 0.0))
                marked, chosen = unrelated_cv(rows)
                rules[f"shipped, unrelated threshold by fold ({min(chosen.values()):.3f}-{max(chosen.values()):.3f})"] = (
                    _rates(rows, marked))
            for name, columns in _rules(use_model).items():
                rules[name] = _rates(rows, cross_validate(rows, columns))
            result[mode] = rules
    return result


def _lines(result: dict[str, Any]) -> list[str]:
    from bench import doc_files

    said = {"lexical": "words only", "semantic": "with the model"}
    rows = []
    for mode, rules in result.items():
        for rule, rates in rules.items():
            rows.append([said.get(mode, mode), rule, *(f"{rates[p][k]:.3f}" for p in ("shared", "real")
                                                       for k in ("answerable", "none_fits"))])
    return doc_files.table(["mode", "rule", "shared: answerable unsure", "shared: none fits, unsure",
                            "real: answerable unsure", "real: none fits, unsure"], rows)


def render_docs(figures: dict[str, Any]) -> dict[str, str]:
    from bench import doc_files

    return {"search-unsure-cv.md": doc_files.page(WRITER, _lines(figures["result"]), figures["measured"])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.search_unsure", description=__doc__.splitlines()[0])
    parser.add_argument("--docs", metavar="DIR", help="also write search-unsure-cv.json and .md into DIR")
    args = parser.parse_args(argv)
    result = study(lambda line: print(line, file=sys.stderr, flush=True))
    print("\n".join(_lines(result)))
    if args.docs is not None:
        from bench import doc_files

        for path in doc_files.publish(WRITER, "search-unsure-cv", result, sys.argv[1:] if argv is None else argv):
            print(f"docs: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
