"""Where the right tool stands: the rank profile of a slice of the development sets.

    python -m bench.search_ranks                        # the paraphrase slice, both sets, both modes
    python -m bench.search_ranks --kind multi           # another slice (`all` for every answerable query)
    python -m bench.search_ranks --docs docs/generated  # and writes search-ranks.json/.md (bench.doc_files)

Owns one question: for the queries a slice misses, is the right tool near the top of some
ranking, or of none? For every answerable query of the slice, on the shared set (five
invented catalogs) and the real one (merged), it finds the rank of the first expected tool
in the shipped ranking (`SearchIndex.order`) and, with the model, in the two rankings the
blend is made of: the words alone (their score, with the related words the model adds)
and the model alone (each tool's closeness to the request). "Either" takes, per query,
the better of those two ranks: its R@3 is the share of the slice that at least one of
the two rankings puts in its top three. A fusion of the two scores that reached beyond
it would have to lift tools that neither ranking puts there, so it says how far
re-weighting what the ranker already reads can go. Rank buckets are counted per ranking: 1-3, 4-5, 6-10, 11-30, 31 and
after, and not ranked (no score).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

from bench import real_set
from bench import search as bench_search

WRITER = "bench.search_ranks"
BUCKETS = ((0, 3, "1-3"), (3, 5, "4-5"), (5, 10, "6-10"), (10, 30, "11-30"), (30, 10**9, "31+"))
UNRANKED = 10**9  # the rank of a tool a ranking does not score
RANKINGS = ("shipped", "words", "model", "either")


def _rank(order: list[int], hit: Callable[[int], bool]) -> int:
    return next((k for k, i in enumerate(order) if hit(i)), UNRANKED)


def _sorted(scores: dict[int, float]) -> list[int]:
    """Positions best first, equal scores in catalog order (as the index sorts)."""
    return [i for i, _ in sorted(scores.items(), key=lambda pair: (-round(pair[1], 9), pair[0]))]


def ranks(index: Any, query: str, hit: Callable[[Any], bool]) -> dict[str, int]:
    """The first expected tool's rank (0 first) in each ranking (`RANKINGS`; without the
    model only the shipped one)."""
    from sidecar.catalog.search.lexical import parse_query

    found = {"shipped": _rank(index.order(query)[0], lambda i: hit(index.entries[i]))}
    if index.semantic is None:
        return found
    parsed = parse_query(query)
    looked = index.semantic.look(query, index.lexical.unknown_terms(parsed), index.lexical.vocabulary())
    if looked is None:
        return found
    words = index.lexical.evidence(parsed, looked.related)
    closeness = looked.closeness or looked.similar
    found["words"] = _rank(_sorted({i: s for i, s in words.scores.items() if s > 0}), lambda i: hit(index.entries[i]))
    found["model"] = _rank(_sorted(dict(enumerate(closeness))), lambda i: hit(index.entries[i]))
    found["either"] = min(found["words"], found["model"])
    return found


def _queries(kind: str) -> Iterator[tuple[str, str, list[str], str]]:
    """(set, catalog, expected names, query) for the slice's answerable queries (the shared
    set's only where it is there)."""
    dev = bench_search.dev_dir()
    shared = bench_search._queries(dev) if (dev / "queries.jsonl").exists() else []
    for q in shared:
        if kind in ("all", q["kind"]):
            yield "shared", q["catalog"], q["expect"], q["query"]
    for q in real_set.queries():
        if q["kind"] != real_set.UNANSWERABLE and kind in ("all", q["kind"]):
            yield "real", "merged", q["expect"], q["query"]


def profile(kind: str, use_model: bool) -> dict[str, dict[str, Any]]:
    """Per set: n, and per ranking its R@3, R@10 and bucket counts."""
    dev = bench_search.dev_dir()
    indexes: dict[str, Any] = {}
    found: dict[str, dict[str, list[int]]] = {}
    for part, catalog, expect, query in _queries(kind):
        if catalog not in indexes:
            indexes[catalog] = (real_set.merged_index(use_model) if catalog == "merged"
                                else bench_search._index(bench_search._tools(dev, catalog), use_model))
        named = (lambda e: f"{e.alias}/{e.name}") if catalog == "merged" else (lambda e: e.name)
        for ranking, rank in ranks(indexes[catalog], query, lambda e: named(e) in expect).items():
            found.setdefault(part, {}).setdefault(ranking, []).append(rank)
    result: dict[str, dict[str, Any]] = {}
    for part, by_ranking in found.items():
        rows: dict[str, Any] = {}
        for ranking, values in by_ranking.items():
            n = len(values)
            rows[ranking] = {"r3": round(sum(v < 3 for v in values) / n, 3), "r10": round(sum(v < 10 for v in values) / n, 3),
                             **{label: sum(low <= v < high for v in values if v != UNRANKED) for low, high, label in BUCKETS},
                             "not ranked": sum(v == UNRANKED for v in values)}
        result[part] = {"n": len(by_ranking["shipped"]), "rankings": rows}
    return result


def study(kind: str, progress: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    modes = [("lexical", False)] + ([("semantic", True)] if bench_search.model_installed() else [])
    result: dict[str, Any] = {"kind": kind}
    with tempfile.TemporaryDirectory() as folder:
        os.environ.setdefault("OMB_SIDECAR_CACHE_DIR", folder)
        os.environ.setdefault("OMB_SIDECAR_SEMANTIC", "1")
        for mode, use_model in modes:
            progress(f"search_ranks: {mode}")
            result[mode] = profile(kind, use_model)
    return result


def _lines(result: dict[str, Any]) -> list[str]:
    from bench import doc_files

    said = {"lexical": "words only", "semantic": "with the model"}
    named = {"shipped": "shipped ranking", "words": "words alone", "model": "model alone", "either": "better of the two"}
    rows = []
    for mode in ("lexical", "semantic"):
        for part, figures in result.get(mode, {}).items():
            for ranking in RANKINGS:
                row = figures["rankings"].get(ranking)
                if row is None:
                    continue
                rows.append([said[mode], f"{part} ({figures['n']})", named[ranking], f"{row['r3']:.3f}", f"{row['r10']:.3f}",
                             *(str(row[label]) for _, _, label in BUCKETS), str(row["not ranked"])])
    return [f"Slice: {result['kind']}.", "",
            *doc_files.table(["mode", "set (queries)", "ranking", "R@3", "R@10", *(f"rank {b[2]}" for b in BUCKETS),
                              "not ranked"], rows)]


def render_docs(figures: dict[str, Any]) -> dict[str, str]:
    from bench import doc_files

    return {"search-ranks.md": doc_files.page(WRITER, _lines(figures["result"]), figures["measured"])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.search_ranks", description=__doc__.splitlines()[0])
    parser.add_argument("--kind", default="paraphrase", help="the slice: a query kind of either set, or `all`")
    parser.add_argument("--docs", metavar="DIR", help="also write search-ranks.json and .md into DIR")
    args = parser.parse_args(argv)
    result = study(args.kind, lambda line: print(line, file=sys.stderr, flush=True))
    print("\n".join(_lines(result)))
    if args.docs is not None:
        from bench import doc_files

        for path in doc_files.publish(WRITER, "search-ranks", result, sys.argv[1:] if argv is None else argv):
            print(f"docs: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
