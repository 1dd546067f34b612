"""The verdict study: does the shipped rule over-fit its development sets, and can a
calibrated rule over more signals do better on queries it was not fitted on?

    python -m bench.search_unsure                  # prints the table
    python -m bench.search_unsure --docs DIR       # and writes search-unsure-cv.json/.md (bench.doc_files)

Owns the study's rows: every query of both development sets (answerable and not), each
with what the verdict reads of its ranking (`sidecar.catalog.search.verdict.Signals`, from
`SearchIndex.order`), and two kinds of check. The shipped rule's last clause (with the
model: no tool within `FAR` in meaning and the words the catalog holds carrying under
`KNOWN` of the request) is cross-validated: each fold picks both thresholds from a grid on
the other folds' queries (the most queries no tool serves marked, both sets summed, with
no more answerable ones marked on either set than 10% or the rule without the clause),
and marks its own queries with them. A logistic rule over the signals is fitted the same
way, its threshold set to mark at most 10% of the training folds' answerable queries. The
folds: ten over the queries (a fixed shuffle), and one per catalog (the five shared
catalogs, the npm reference servers' lists, the merged real catalogs). Needs numpy (the
`[semantic]` extra brings it).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
from collections.abc import Callable
from typing import Any, NamedTuple

from bench import real_set
from bench import search as bench_search

WRITER = "bench.search_unsure"
ANSWERABLE_UNSURE = 0.10  # the most answerable queries a threshold may mark unsure (training folds)
QUERY_FOLDS = 10
WORD_FEATURES = ("best word score", "first tool's share", "unexplained share", "known share", "terms")
MODEL_FEATURES = ("best similarity", "first tool's similarity", "named outright")
FAR_GRID = tuple(round(0.02 * step, 2) for step in range(16))  # 0 .. 0.30
KNOWN_GRID = tuple(round(0.05 * step, 2) for step in range(21))  # 0 .. 1
STRONG_GRID = tuple(range(8, 42, 2))  # best word scores
SHORT_GRID = tuple(range(2, 9))  # terms
ACT_GRID = tuple(range(0, 13))  # terms (0: the clause off)


def features(index: Any, query: str) -> tuple[list[float], Any]:
    """(the request's features: `WORD_FEATURES`, then with the model `MODEL_FEATURES`; the
    verdict's signals, None when no tool scores)."""
    _, seen = index.order(query)
    if seen is None:
        return [0.0] * (len(WORD_FEATURES) + (len(MODEL_FEATURES) if index.semantic is not None else 0)), None
    row = [math.log1p(seen.best_words), seen.cover_first, seen.unexplained, seen.known, math.log(seen.terms + 1)]
    if seen.model:
        row += [seen.best_similar, seen.first_similar, float(seen.named)]
    return row, seen


def collect(use_model: bool) -> list[dict[str, Any]]:
    """Every query of both sets: its set, its catalog (a fold), answerable or not, its
    features and signals."""
    import json

    dev = bench_search.dev_dir()
    shared = bench_search._queries(dev)
    none_fits = [json.loads(line) for line in (bench_search.OWN_SET / "unanswerable.jsonl").read_text().splitlines()
                 if line.strip()]
    rows: list[dict[str, Any]] = []
    for name in sorted({q["catalog"] for q in shared + none_fits}):
        index = bench_search._index(bench_search._catalog_tools(dev, name), use_model)
        fold = "npm" if name.startswith("npm:") else name.removesuffix(".json")
        for q in (q for q in shared + none_fits if q["catalog"] == name):
            row, seen = features(index, q["query"])
            rows.append({"set": "shared", "fold": fold, "answerable": bool(q["expect"]), "x": row, "seen": seen})
    index = real_set.merged_index(use_model)
    for q in real_set.queries():
        row, seen = features(index, q["query"])
        rows.append({"set": "real", "fold": "real", "answerable": bool(q["expect"]), "x": row, "seen": seen})
    return rows


def query_folds(rows: list[dict[str, Any]]) -> list[str]:
    """Each row's fold of `QUERY_FOLDS` over the queries (a fixed shuffle)."""
    import random

    order = list(range(len(rows)))
    random.Random(25).shuffle(order)
    folds = [""] * len(rows)
    for rank, position in enumerate(order):
        folds[position] = f"q{rank % QUERY_FOLDS}"
    return folds


def catalog_folds(rows: list[dict[str, Any]]) -> list[str]:
    return [r["fold"] for r in rows]


def _marks(rows: list[dict[str, Any]], rule: Any = None) -> list[bool]:
    """Each row's verdict under `rule` (a `verdict.Thresholds`; None: the shipped one)."""
    from sidecar.catalog.search import verdict

    rule = rule or verdict.SHIPPED
    return [r["seen"] is None or verdict.unsure(r["seen"], rule) for r in rows]


class Clause(NamedTuple):
    """A clause of the shipped rule to cross-validate: the rule with it off, the rules to
    choose its thresholds from, how to name a choice, and whether it needs the model."""

    off: Any
    choices: list[Any]
    said: Callable[[Any], str]
    model: bool | None  # None: either way


def _clauses() -> dict[str, Clause]:
    from sidecar.catalog.search.verdict import SHIPPED

    strong = [SHIPPED._replace(strong=float(score), short=terms) for score in STRONG_GRID for terms in SHORT_GRID]
    short = [SHIPPED._replace(known_words=known) for known in KNOWN_GRID]
    far = [SHIPPED._replace(far=far, known=known) for far in FAR_GRID for known in KNOWN_GRID]
    act = [SHIPPED._replace(act_terms=terms) for terms in ACT_GRID]
    thing = [SHIPPED._replace(object_terms=terms) for terms in ACT_GRID]
    return {
        "a short request's act no top tool does": Clause(
            SHIPPED._replace(act_terms=0), act, lambda rule: f"{rule.act_terms}", None),
        "a short request's things no top tool doing its act holds": Clause(
            SHIPPED._replace(object_terms=0), thing, lambda rule: f"{rule.object_terms}", False),
        "strong words on a short request naming no tool": Clause(
            SHIPPED._replace(strong=math.inf), strong, lambda rule: f"{rule.strong:g}/{rule.short}", None),
        "known share of a short request": Clause(
            SHIPPED._replace(known_words=0.0), short, lambda rule: f"{rule.known_words:.2f}", False),
        "known share, nothing close in meaning": Clause(
            SHIPPED._replace(known=0.0), far, lambda rule: f"{rule.far:.2f}/{rule.known:.2f}", True),
    }


def clause_cv(rows: list[dict[str, Any]], folds: list[str], off: Any,
              choices: list[Any]) -> tuple[list[bool], list[Any]]:
    """Each query's held-out verdict with a clause's thresholds picked among `choices` on
    the other folds (the most queries no tool serves marked, both sets summed, marking no
    more of either set's answerable ones than `ANSWERABLE_UNSURE` or the rule with the
    clause `off`), and the rule each fold picked."""
    marked = [False] * len(rows)
    picked = []
    for fold in sorted(set(folds)):
        train = [r for r, f in zip(rows, folds) if f != fold]
        without = _rates(train, _marks(train, off))
        bound = {p: max(ANSWERABLE_UNSURE, rates["answerable"]) for p, rates in without.items()}
        best: tuple[float, Any] = (-1.0, off)
        for rule in choices:
            rates = _rates(train, _marks(train, rule))
            # A set absent from the training folds sets no bound.
            if any(rates[p]["answerable_n"] and rates[p]["answerable"] > bound[p] for p in rates):
                continue
            gained = sum(rates[p]["none_fits"] for p in rates)
            if gained > best[0] + 1e-9:
                best = (gained, rule)
        picked.append(best[1])
        held = [i for i, f in enumerate(folds) if f == fold]
        for i, mark in zip(held, _marks([rows[i] for i in held], best[1])):
            marked[i] = mark
    return marked, picked


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


def cross_validate(rows: list[dict[str, Any]], columns: list[int], folds: list[str]) -> list[bool]:
    """Each query's held-out verdict (True: unsure) from the logistic rule fitted on the
    other `folds`, over the feature `columns`."""
    import numpy as np

    x = np.array([[r["x"][c] for c in columns] for r in rows])
    x = (x - x.mean(0)) / (x.std(0) + 1e-9)
    y = np.array([0.0 if r["answerable"] else 1.0 for r in rows])
    labels = np.array(folds)
    marked = np.zeros(len(rows), bool)
    for fold in sorted(set(folds)):
        train = labels != fold
        beta = _fit(x[train], y[train])
        answerable = np.sort(_probability(beta, x[train][y[train] == 0]))
        threshold = answerable[math.ceil((1 - ANSWERABLE_UNSURE) * len(answerable)) - 1]
        marked[~train] = _probability(beta, x[~train]) > threshold
    return [bool(m) for m in marked]


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
    words = list(range(len(WORD_FEATURES)))
    if not use_model:
        return {"fitted, words": words}
    return {"fitted, words and model": words + list(range(len(WORD_FEATURES), len(WORD_FEATURES) + len(MODEL_FEATURES)))}


def study(progress: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    modes = [("lexical", False)] + ([("semantic", True)] if bench_search.model_installed() else [])
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        os.environ.setdefault("OMB_SIDECAR_CACHE_DIR", folder)
        for mode, use_model in modes:
            progress(f"search_unsure: {mode}")
            rows = collect(use_model)
            splits = {"10 folds over queries": query_folds(rows), "by held-out catalog": catalog_folds(rows)}
            rules = {"shipped": _rates(rows, _marks(rows))}
            for clause, check in _clauses().items():
                if check.model not in (None, use_model):
                    continue
                rules[f"shipped without the clause: {clause}"] = _rates(rows, _marks(rows, check.off))
                for split, folds in splits.items():
                    marked, picked = clause_cv(rows, folds, check.off, check.choices)
                    chosen = ", ".join(sorted({check.said(rule) for rule in picked}))
                    rules[f"shipped, {clause}: thresholds {split} ({chosen})"] = _rates(rows, marked)
            for name, columns in _rules(use_model).items():
                for split, folds in splits.items():
                    rules[f"{name}, {split}"] = _rates(rows, cross_validate(rows, columns, folds))
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
