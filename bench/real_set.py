"""The project's own retrieval development set, built from real catalogs: scoring by slice.

Owns reading the set (`tests/retrieval/catalogs/*.json`, the captured `tools/list` of
published MCP servers, and `tests/retrieval/real_queries.jsonl`), merging the catalogs as
a user with all those servers would see them (one catalog, each tool under its server's
prefix), and the figures: per slice R@1, R@3, R@10 (among the ten tools an answer shows
with a description), "in view" (among every name the real `find_tool` answer shows: the
ten, then the bare names its byte budget leaves room for), MRR and the share marked
unsure; for the queries no tool serves, the share marked unsure. An expected tool is
written `server/tool`.

    python -m bench.real_set              # words only
    python -m bench.real_set --semantic   # with the [semantic] extra
    python -m bench.real_set --docs DIR   # the set's catalogs and queries as docs tables (bench.doc_files)

(The figures by slice for the docs come from `python -m bench.search --docs DIR`, which
scores this set beside the shared one.)
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
IN_VIEW = 10  # tools an answer shows with a description: three whole, seven by one line
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


def answer_view(index: Any, query: str) -> list[Any]:
    """The entries whose names the real `find_tool` answer over `index` shows for `query`
    (tools whole, the short list, the bare names), in order: what "in view" counts. An
    answer that found nothing lists the catalog's names in catalog order, not ranked: it
    counts as showing none."""
    from sidecar.catalog.answers import answer_meta
    from sidecar.catalog.layouts import Listing, MetaTool
    from sidecar.catalog.layouts.shown import shown_names

    by_name = {e.exposed: e for e in index.entries}
    listing = Listing((), "bridged", {"find_tool": MetaTool("find_tool", {n: n for n in by_name}, index)})
    no_catalog: Any = None  # a search reads only the index; the catalog serves describe calls
    answer = answer_meta(listing, no_catalog, "find_tool", {"query": query}, lambda _: True)
    if not answer["structuredContent"].get("tools"):
        return []
    return [by_name[n] for n in shown_names(answer["structuredContent"]) if n in by_name]


def _mean(values: Any) -> float:
    values = [float(v) for v in values]
    return round(sum(values) / len(values), 3) if values else 0.0


FIGURES = ("r1", "r3", "r10", "in_view", "mrr", "unsure", "view_names")


def judge(index: Any, query: str, expect: list[str], named: Any) -> tuple[float, ...]:
    """One answerable query's row of `FIGURES`; `named(entry)` is how `expect` spells a tool."""
    ranked = index.rank(query, IN_VIEW)
    ranks = [i for i, e in enumerate(ranked.found) if named(e) in expect]
    first = ranks[0] if ranks else IN_VIEW
    view = answer_view(index, query)
    in_view = any(named(e) in expect for e in view)
    return (first == 0, first < 3, first < IN_VIEW, in_view, 1 / (first + 1) if ranks else 0.0, ranked.weak, len(view))


def slice_figures(rows: list[tuple[float, ...]]) -> dict[str, float]:
    return {"n": len(rows), **{name: _mean(r[i] for r in rows) for i, name in enumerate(FIGURES)}}


def score(use_model: bool, index: Any = None) -> dict[str, dict[str, float]]:
    """Figures per slice: `overall` and `kind=...` for the answerable queries (n and
    `FIGURES`), `unanswerable` and `unanswerable=<sub>` (n, unsure)."""
    index = index or merged_index(use_model)
    rows: dict[str, list[tuple[float, ...]]] = defaultdict(list)
    for q in queries():
        if q["kind"] == UNANSWERABLE:
            weak = index.rank(q["query"], IN_VIEW).weak
            for key in (UNANSWERABLE, f"{UNANSWERABLE}={q.get('sub', '')}"):
                rows[key].append((weak,))
            continue
        row = judge(index, q["query"], q["expect"], lambda e: f"{e.alias}/{e.name}")
        for key in ("overall", f"kind={q['kind']}"):
            rows[key].append(row)
    result: dict[str, dict[str, float]] = {}
    for key, found in sorted(rows.items(), key=lambda pair: (pair[0].startswith(UNANSWERABLE), pair[0] != "overall", pair[0])):
        if key.startswith(UNANSWERABLE):
            result[key] = {"n": len(found), "unsure": _mean(r[0] for r in found)}
        else:
            result[key] = slice_figures(found)
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
    lines = ["| slice | n | R@1 | R@3 | R@10 | in view | MRR | unsure |", "|---|---|---|---|---|---|---|---|"]
    for key, row in figures.items():
        if key.startswith(UNANSWERABLE):
            lines.append(f"| {key} (served by none) | {row['n']} | | | | | | {row['unsure']:.3f} |")
        else:
            cells = " | ".join(f"{row[k]:.3f}" for k in ("r1", "r3", "r10", "in_view", "mrr", "unsure"))
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


def catalog_facts(folder: Path = REAL_SET / "catalogs") -> list[dict[str, Any]]:
    """Per captured server: package, reported version, tools, mean and longest description (characters)."""
    found = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text())
        sizes = [len(t.get("description") or "") for t in data["tools"]]
        found.append({"server": data["server"], "package": data.get("package", ""), "version": data.get("version", ""),
                      "tools": len(sizes), "mean_description": round(statistics.mean(sizes)) if sizes else 0,
                      "longest_description": max(sizes, default=0)})
    return found


def query_kinds() -> dict[str, int]:
    """How many queries of each kind the set holds."""
    counts: dict[str, int] = defaultdict(int)
    for q in queries():
        counts[q["kind"]] += 1
    return dict(counts)


def render_docs(figures: dict[str, Any]) -> dict[str, str]:
    """The set's catalogs and its queries by kind, for docs/layouts-and-search.md."""
    from bench import doc_files

    rows = [[c["server"], f"`{c['package']}`", c["version"], str(c["tools"]), str(c["mean_description"]),
             str(c["longest_description"])] for c in figures["catalogs"]]
    rows.append(["**all**", "", "", str(sum(c["tools"] for c in figures["catalogs"])), "", ""])
    catalogs = doc_files.table(["server", "package", "version", "tools", "mean description", "longest"], rows)
    kinds = doc_files.table(["kind", "n"], [[k, str(n)] for k, n in figures["kinds"].items()])
    return {"real-set-catalogs.md": doc_files.page("bench.real_set", catalogs, figures["measured"]),
            "real-set-queries.md": doc_files.page("bench.real_set", kinds, figures["measured"])}


def write_docs(folder: Path, command: str) -> list[Path]:
    from bench import doc_files

    figures = {"measured": doc_files.stamp(command), "catalogs": catalog_facts(), "kinds": query_kinds()}
    return doc_files.write("real-set", "bench.real_set", figures, folder)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.real_set", description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, metavar="DIR", help="write the set's docs tables into DIR and stop")
    parser.add_argument("--semantic", action="store_true", help="blend in the sentence model")
    parser.add_argument("--misses", action="store_true", help="list the queries with no hit in the top 3")
    args = parser.parse_args(argv)
    if args.docs is not None:
        command = "python -m bench.real_set" + "".join(f" {a}" for a in (sys.argv[1:] if argv is None else argv))
        for path in write_docs(args.docs, command):
            print(path)
        return 0
    if args.misses:
        print("\n".join(misses(args.semantic)))
        return 0
    print("\n".join(render(score(args.semantic))))
    figures = latency(args.semantic)  # a fresh index, so no query's vector is kept from scoring
    print(f"\nquery p50 {figures['p50_ms']} ms, p99 {figures['p99_ms']} ms over {figures['tools']} tools")
    return 0


if __name__ == "__main__":
    sys.exit(main())
