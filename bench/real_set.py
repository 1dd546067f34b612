"""The project's own retrieval development set, built from real catalogs: scoring by slice.

Owns reading the set (`tests/retrieval/catalogs/*.json`, the captured `tools/list` of
published MCP servers, and `tests/retrieval/real_queries.jsonl`), merging the catalogs as
a user with all those servers would see them (one catalog, each tool under its server's
prefix), and the figures: per slice R@1, R@3, R@10 ("in view": among the ten names an
answer shows), MRR and the share marked unsure; for the queries no tool serves, the share
marked unsure. An expected tool is written `server/tool`.

    python -m bench.real_set              # words only
    python -m bench.real_set --semantic   # with the [semantic] extra
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.candidates import BENCH_DIR

REAL_SET = BENCH_DIR.parent / "tests" / "retrieval"
IN_VIEW = 10
UNANSWERABLE = "unanswerable"


def catalogs(folder: Path = REAL_SET / "catalogs") -> dict[str, list[dict[str, Any]]]:
    """Server alias -> its captured tools, in name order of the files."""
    found: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text())
        found[str(data["server"])] = list(data["tools"])
    return found


def queries(path: Path = REAL_SET / "real_queries.jsonl") -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def merged_index(use_model: bool) -> Any:
    """One search index over every captured server, prefixed as the sidecar lists them."""
    from sidecar.catalog import SearchIndex, UpstreamListing, build_catalog

    listings = [UpstreamListing(alias, tools) for alias, tools in catalogs().items()]
    catalog = build_catalog(listings, 64, prefixed=True)
    index = SearchIndex(catalog.tools, use_model=use_model).build()
    if use_model and (index.semantic is None or not index.semantic.wait(900)):
        raise SystemExit("the sentence model did not become ready")
    return index


def _mean(values: Any) -> float:
    values = [float(v) for v in values]
    return round(sum(values) / len(values), 3) if values else 0.0


def score(use_model: bool, index: Any = None) -> dict[str, dict[str, float]]:
    """Figures per slice: `overall` and `kind=...` for the answerable queries (n, r1, r3,
    r10, mrr, unsure), `unanswerable` and `unanswerable=<sub>` (n, unsure)."""
    index = index or merged_index(use_model)
    rows: dict[str, list[tuple[float, ...]]] = defaultdict(list)
    for q in queries():
        ranked = index.rank(q["query"], IN_VIEW)
        if q["kind"] == UNANSWERABLE:
            for key in (UNANSWERABLE, f"{UNANSWERABLE}={q.get('sub', '')}"):
                rows[key].append((ranked.weak,))
            continue
        names = [f"{e.alias}/{e.name}" for e in ranked.found]
        ranks = [i for i, n in enumerate(names) if n in q["expect"]]
        first = ranks[0] if ranks else IN_VIEW
        row = (first == 0, first < 3, first < IN_VIEW, 1 / (first + 1) if ranks else 0.0, ranked.weak)
        for key in ("overall", f"kind={q['kind']}"):
            rows[key].append(row)
    result: dict[str, dict[str, float]] = {}
    for key, found in sorted(rows.items(), key=lambda pair: (pair[0].startswith(UNANSWERABLE), pair[0] != "overall", pair[0])):
        if key.startswith(UNANSWERABLE):
            result[key] = {"n": len(found), "unsure": _mean(r[0] for r in found)}
        else:
            result[key] = {"n": len(found), **{name: _mean(r[i] for r in found)
                                               for i, name in enumerate(("r1", "r3", "r10", "mrr", "unsure"))}}
    return result


def latency(use_model: bool, index: Any = None) -> dict[str, float]:
    """Per-query CPU time over the merged catalog, every query of the set (ms). Give it a
    fresh index: one that ranked these queries before keeps their vectors."""
    index = index or merged_index(use_model)
    texts = [q["query"] for q in queries()]
    index.search("warm up", 3)
    times = []
    for text in texts:
        started = time.thread_time()
        index.rank(text, IN_VIEW)
        times.append((time.thread_time() - started) * 1000)
    times.sort()
    return {"tools": len(index.entries), "queries": len(times), "p50_ms": round(statistics.median(times), 3),
            "p99_ms": round(times[min(len(times) - 1, int(len(times) * 0.99))], 3)}


def render(figures: dict[str, dict[str, float]]) -> list[str]:
    lines = ["| slice | n | R@1 | R@3 | R@10 | MRR | unsure |", "|---|---|---|---|---|---|---|"]
    for key, row in figures.items():
        if key.startswith(UNANSWERABLE):
            lines.append(f"| {key} (served by none) | {row['n']} | | | | | {row['unsure']:.3f} |")
        else:
            cells = " | ".join(f"{row[k]:.3f}" for k in ("r1", "r3", "r10", "mrr", "unsure"))
            lines.append(f"| {key} | {row['n']} | {cells} |")
    return lines


def misses(use_model: bool) -> list[str]:
    """The answerable queries whose expected tools are not in view, with what was shown first."""
    index = merged_index(use_model)
    found = []
    for q in queries():
        if q["kind"] == UNANSWERABLE:
            continue
        ranked = index.rank(q["query"], IN_VIEW)
        names = [f"{e.alias}/{e.name}" for e in ranked.found]
        if not any(n in q["expect"] for n in names[:3]):
            found.append(f"{q['kind']:<11} {q['query'][:60]:<60} -> {', '.join(names[:3])}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.real_set", description=__doc__.splitlines()[0])
    parser.add_argument("--semantic", action="store_true", help="blend in the sentence model")
    parser.add_argument("--misses", action="store_true", help="list the queries with no hit in the top 3")
    args = parser.parse_args(argv)
    if args.misses:
        print("\n".join(misses(args.semantic)))
        return 0
    print("\n".join(render(score(args.semantic))))
    figures = latency(args.semantic)  # a fresh index, so no query's vector is kept from scoring
    print(f"\nquery p50 {figures['p50_ms']} ms, p99 {figures['p99_ms']} ms over {figures['tools']} tools")
    return 0


if __name__ == "__main__":
    sys.exit(main())
