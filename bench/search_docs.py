"""The search figures the documentation shows, as tables rendered from one JSON file.

Owns `docs/generated/search.json` (what `python -m bench.search --docs DIR` measured: the
run of `bench.search.run_search`, the answers' bytes and the compact listing's bytes) and
the markdown made from it: recall by slice on the shared development set and on the set
from real catalogs, the share marked unsure, the costs, the targets, the answer sizes and
the compact listing's bytes. `docs/layouts-and-search.md` includes them with `--8<--`.

Measures nothing; `bench.search` measures, `bench.doc_files` writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench import doc_files

__all__ = ["render_docs", "write"]

WRITER = "bench.search_docs"
MODES = (("lexical", "words only"), ("semantic", "with the model"))


def write(run: dict[str, Any], answers: dict[str, Any], compact: list[dict[str, Any]], command: str,
          folder: Path = doc_files.DOCS_GENERATED) -> list[Path]:
    figures = {"measured": doc_files.stamp(command), "run": run, "answers": answers, "compact": compact}
    return doc_files.write("search", WRITER, figures, folder)


def _trio(row: dict[str, float]) -> str:
    return " / ".join(f"{row[k]:.3f}" for k in ("r1", "r3", "r10", "in_view") if k in row)


def _modes(figures: dict[str, Any]) -> list[tuple[str, str]]:
    return [(mode, said) for mode, said in MODES if mode in figures["run"]["modes"]]


def _slice_name(key: str) -> str:
    return key.removeprefix("kind=").removeprefix("unanswerable=").removesuffix(".json")


def _by_slice(figures: dict[str, Any], part: str, unanswerable: str | None) -> list[str]:
    """R@1 / R@3 / R@10 and unsure per slice, a pair of columns per mode."""
    modes = _modes(figures)
    header = ["slice", "n"] + [c for _, said in modes for c in (f"{said}: R@1 / R@3 / R@10 / in view", "unsure")]
    first = figures["run"]["modes"][modes[0][0]][part]
    rows = []
    for key, row in sorted(first.items(), key=lambda pair: _slice_order(pair[0])):
        if key.startswith("unanswerable"):
            continue
        cells = [c for mode, _ in modes for c in (_trio(figures["run"]["modes"][mode][part][key]),
                                                   f"{figures['run']['modes'][mode][part][key]['unsure']:.3f}")]
        rows.append([f"**{key}**" if key == "overall" else _slice_name(key), str(row["n"]), *cells])
    for key, row in _unanswerable_rows(figures, part, unanswerable):
        rows.append([key, str(row["n"]), *[c for mode, _ in modes for c in (
            "", f"{_unsure_of(figures, mode, part, unanswerable, row['key']):.3f}")]])
    return doc_files.table(header, rows)


def _slice_order(key: str) -> int:
    """Overall first, then the kinds of query, then the catalogs (a stable sort keeps each
    group in the bench's order)."""
    return 0 if key == "overall" else 1 if key.startswith("kind=") else 2


def _unanswerable_rows(figures: dict[str, Any], part: str, source: str | None) -> list[tuple[str, dict[str, Any]]]:
    """The queries no tool serves: overall and by kind (in `part` on the real set, in
    `source` on the shared set)."""
    mode = _modes(figures)[0][0]
    table = figures["run"]["modes"][mode][source or part]
    found = []
    for key, row in table.items():
        if source is None and not key.startswith("unanswerable"):
            continue
        if source is not None and not (key == "overall" or key.startswith("kind=")):
            continue
        whole = key in ("overall", "unanswerable")
        name = "**served by none**" if whole else f"served by none: {_slice_name(key)}"
        found.append((name, {"n": row["n"], "key": key}))
    return found


def _unsure_of(figures: dict[str, Any], mode: str, part: str, source: str | None, key: str) -> float:
    return float(figures["run"]["modes"][mode][source or part][key]["unsure"])


def _costs(figures: dict[str, Any]) -> list[str]:
    rows = []
    for mode, said in _modes(figures):
        entry = figures["run"]["modes"][mode]
        cold, cached = entry["build_cold"], entry.get("build_cached")
        built = f"{cold['lexical_build_ms']} ms CPU (words)" + (
            f"; model loaded and {cold.get('embedded', '?')} tools embedded: {cold['ready_s']} s wall" if "ready_s" in cold else "")
        reuse = (f"{cached.get('embedded')} embedded; a second index reads the vectors in "
                 f"{cached.get('vectors_from_cache_ms')} ms wall") if cached else "-"
        shared, real = entry["latency"], entry["real_latency"]
        rows.append([said, f"{shared['p50_ms']} / {shared['p99_ms']} ms", f"{real['p50_ms']} / {real['p99_ms']} ms",
                     built, reuse, f"{cold['rss_added_mb']} MB"])
    tools = figures["run"]["modes"][_modes(figures)[0][0]]["real_latency"]["tools"]
    return doc_files.table(["mode", "query p50 / p99, 298-tool shared catalog", f"query p50 / p99, {tools}-tool real catalog",
                            f"index build, {figures['run']['modes'][_modes(figures)[0][0]]['build_cold']['tools']} tools",
                            "build with cached vectors", "RSS added"], rows)


def _best(figures: dict[str, Any], part: str, key: str, stat: str) -> str:
    return ", ".join(f"{figures['run']['modes'][mode][part][key][stat]:.3f} ({said})" for mode, said in _modes(figures))


def _worst_slice(figures: dict[str, Any], part: str, stat: str) -> str:
    mode, said = _modes(figures)[-1]
    rows = {k: r for k, r in figures["run"]["modes"][mode][part].items() if k.startswith("kind=")}
    key = min(rows, key=lambda k: rows[k][stat])
    return f"{_slice_name(key)} {rows[key][stat]:.3f} ({said})"


def _targets(figures: dict[str, Any]) -> list[str]:
    rows = [
        ["R@3 >= 0.75 overall", _best(figures, "real", "overall", "r3"), _best(figures, "recall", "overall", "r3")],
        ["R@3 >= 0.60 every slice (the lowest)", _worst_slice(figures, "real", "r3"), _worst_slice(figures, "recall", "r3")],
        ["R@10 >= 0.92 overall", _best(figures, "real", "overall", "r10"), _best(figures, "recall", "overall", "r10")],
        ["R@10 >= 0.85 every slice (the lowest)", _worst_slice(figures, "real", "r10"), _worst_slice(figures, "recall", "r10")],
        ["in view >= 0.92 overall", _best(figures, "real", "overall", "in_view"),
         _best(figures, "recall", "overall", "in_view")],
        ["in view >= 0.85 every slice (the lowest)", _worst_slice(figures, "real", "in_view"),
         _worst_slice(figures, "recall", "in_view")],
        ["typo R@3 >= 0.95", _best(figures, "real", "kind=typo", "r3"), _best(figures, "recall", "kind=typo", "r3")],
        ["plain words R@3 >= 0.95", _best(figures, "real", "kind=plain", "r3"), _best(figures, "recall", "kind=lexical", "r3")],
        ["answerable marked unsure <= 0.10", _best(figures, "real", "overall", "unsure"),
         _best(figures, "recall", "overall", "unsure")],
        ["served by none marked unsure >= 0.80", _best(figures, "real", "unanswerable", "unsure"),
         ", ".join(f"{figures['run']['modes'][m]['unanswerable']['overall']['unsure']:.3f} ({s})" for m, s in _modes(figures))],
    ]
    return doc_files.table(["target", "real catalogs", "shared set"], rows)


def _unsure(figures: dict[str, Any]) -> list[str]:
    """The share marked unsure: the answerable queries, those no tool serves, by kind, on both sets."""
    modes = _modes(figures)
    header = ["share marked unsure", *(f"shared set, {said}" for _, said in modes),
              *(f"real catalogs, {said}" for _, said in modes), "target"]

    def cells(shared_key: str | None, real_key: str | None) -> list[str]:
        found = []
        for part, key in (("unanswerable", shared_key), ("real", real_key)):
            for mode, _ in modes:
                row = figures["run"]["modes"][mode][part].get(key or "", {}) if part != "recall" else {}
                found.append(f"{row['unsure']:.3f} (n {row['n']})" if row else "-")
        return found

    answerable = [f"{figures['run']['modes'][m]['recall']['overall']['unsure']:.3f} (n {figures['run']['modes'][m]['recall']['overall']['n']})"
                  for m, _ in modes]
    real_answerable = [f"{figures['run']['modes'][m]['real']['overall']['unsure']:.3f} (n {figures['run']['modes'][m]['real']['overall']['n']})"
                       for m, _ in modes]
    rows = [["answerable queries", *answerable, *real_answerable, "<= 0.10"],
            ["**queries no tool serves**", *cells("overall", "unanswerable"), ">= 0.80"]]
    for kind in ("near_domain", "out_of_domain", "non_english", "typo"):
        rows.append([f"of which {kind}", *cells(f"kind={kind}", f"unanswerable={kind}"), ""])
    return doc_files.table(header, rows)


def _answers(figures: dict[str, Any]) -> list[str]:
    rows = [[key, str(row["n"]), str(row["mean_bytes"]), str(row["max_bytes"]), f"{row['cut']:.0%}",
             f"{row['names']:.1f}" if "names" in row else "-"]
            for key, row in sorted(figures["answers"].items(), key=lambda pair: pair[0] != "overall")]
    return doc_files.table(["catalog", "queries", "mean B", "largest B", "cut to fit", "names shown (mean)"], rows)


def _compact(figures: dict[str, Any]) -> list[str]:
    rows = [[row["catalog"], str(row["tools"]), str(row["full_bytes"]), str(row["compact_bytes"]),
             f"{1 - row['compact_bytes'] / row['full_bytes']:.0%}"] for row in figures["compact"]]
    return doc_files.table(["catalog", "tools", "full B", "compact B", "saved"], rows)


def render_docs(figures: dict[str, Any]) -> dict[str, str]:
    """Every search table the pages include, by file name."""
    measured = figures["measured"]
    if "skipped" in figures["run"]:
        said = doc_files.page(WRITER, [f"Not measured: {figures['run']['skipped']}."], measured)
        return {f"search-{name}.md": said for name in ("shared", "real", "costs", "targets", "unsure")} | {
            "search-answers.md": doc_files.page(WRITER, _answers(figures), measured),
            "search-compact.md": doc_files.page(WRITER, _compact(figures), measured)}
    return {
        "search-shared.md": doc_files.page(WRITER, _by_slice(figures, "recall", "unanswerable"), measured),
        "search-real.md": doc_files.page(WRITER, _by_slice(figures, "real", None), measured),
        "search-costs.md": doc_files.page(WRITER, _costs(figures), measured),
        "search-targets.md": doc_files.page(WRITER, _targets(figures), measured),
        "search-unsure.md": doc_files.page(WRITER, _unsure(figures), measured),
        "search-answers.md": doc_files.page(WRITER, _answers(figures), measured),
        "search-compact.md": doc_files.page(WRITER, _compact(figures), measured),
    }
