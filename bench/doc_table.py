"""The benchmark figures the documentation shows, written by the bench, never copied by hand.

Owns two files under `docs/generated/`: `bench-figures.json`, the figures a run gives the
docs (picked out of the full results after `report.derive`), and `bench-table.md`, those
figures as markdown tables that `docs/benchmarks.md` includes with `--8<--`. A full
`python -m bench` run rewrites both; `python -m bench.doc_table` renders the markdown again
from the JSON (a test checks the two agree, so the table is never edited by hand).

Refuses to measure anything: it only picks and formats what `bench.runner` measured.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bench import doc_files
from bench.doc_files import DOCS_GENERATED

__all__ = ["DOCS_GENERATED", "FIGURES_FILE", "TABLE_FILE", "pick_figures", "render_docs", "render_markdown", "write"]

FIGURES_FILE = "bench-figures.json"
TABLE_FILE = "bench-table.md"

# The per-candidate medians the docs show, by case.
WANTED = {
    "session": ("init_ms", "init_cpu_ms", "list_ms", "list_warm_ms", "call_p50_us", "call_p90_us", "call_p99_us",
                "added_p50_us", "calls_per_s_16", "calls_per_s_64", "cpu_us_per_call",
                "cpu_us_per_call_64", "vmrss_idle_kb", "blob_1mb_ms", "blob_20mb_ms", "blob_20mb_reply_bytes"),
    "fresh": ("list_ms",),
    "many": ("list_ms",),
    "three": ("list_ms",),
    "http": ("http_call_p50_us", "http_call_p90_us", "http_call_p99_us",
             "http_session_p50_us", "http_session_p90_us", "http_session_p99_us", "http_session_added_p50_us",
             "http_session_added_vs_stdio", "http_stateless_p50_us", "http_stateless_p90_us",
             "http_stateless_p99_us", "http_stateless_added_p50_us", "http_stateless_added_vs_stdio",
             "http_call_cpu_us", "http_session_cpu_us", "http_stateless_cpu_us",
             "http_session_cpu_vs_stdio", "http_stateless_cpu_vs_stdio", "http_stdio_added_p50_us",
             "http_stdio_cpu_us", "http_stdio_p50_us", "http_stdio_p90_us", "http_stdio_p99_us"),
}
IN_MEMORY = {
    "layout_build": ("merge_3x425_ms", "list_3x425_ms"),
    "gate": ("gate_route_only_us", "gate_default_us", "gate_full_us", "gate_with_secrets_us",
             "redact_1mb_ms", "shape_1mb_ms", "shape_20mb_ms", "query_20mb_ms"),
    "first_sight": ("screen_only_cpu_ms", "screen_only_longest_ms", "prepared_cpu_ms", "prepared_longest_ms_max",
                    "same_verdict"),
    "imports": ("interpreter_ms", "direct_ms", "early_answer_ms", "runtime_ms"),
}


def pick_figures(results: dict[str, Any], command: str) -> dict[str, Any]:
    """The figures the docs show, from a derived run (`report.derive` has added ratios)."""
    medians: dict[str, dict[str, dict[str, float]]] = {}
    for case, keys in WANTED.items():
        body = results["cases"].get(case, {}).get("results", {})
        medians[case] = {name: {k: entry["median"][k] for k in keys if k in entry.get("median", {})}
                         for name, entry in body.items() if entry.get("median")}
    in_memory = {k: v for section, keys in IN_MEMORY.items()
                 for k, v in (results.get(section) or {}).items() if k in keys}
    return {"measured": doc_files.stamp(command),
            "machine": results["machine"], "duration_s": results["duration_s"], "command": command,
            "candidates": list(results["candidates"]), "medians": medians, "in_memory": in_memory,
            "targets": results.get("targets", []), "floors": results.get("floors", {})}


def write(results: dict[str, Any], command: str, folder: Path = DOCS_GENERATED) -> Path:
    """Writes the figures and their markdown into `folder`; returns the markdown's path."""
    doc_files.write(FIGURES_FILE.removesuffix(".json"), "bench.doc_table", pick_figures(results, command), folder)
    return folder / TABLE_FILE


def render_docs(figures: dict[str, Any]) -> dict[str, str]:
    """What `bench.doc_files` writes from the figures: the one markdown file."""
    return {TABLE_FILE: render_markdown(figures)}


# -- markdown -----------------------------------------------------------------------------

def _num(value: float | None) -> str:
    if value is None:
        return "-"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    said = f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"
    return said.rstrip("0").rstrip(".") if "." in said else said  # 41, 6.2, 5.94: no noise digits


def _get(figures: dict[str, Any], case: str, name: str, key: str) -> float | None:
    value = figures["medians"].get(case, {}).get(name, {}).get(key)
    return float(value) if value is not None else None


def _cells(figures: dict[str, Any], name: str, *keys: str, case: str = "session", scale: float = 1.0) -> str:
    values = [_get(figures, case, name, key) for key in keys]
    if all(v is None for v in values):
        return "-"
    return " / ".join(_num(v * scale if v is not None else None) for v in values)


ROWS: tuple[tuple[str, str, tuple[str, ...], float], ...] = (
    ("start -> initialize (ms)", "session", ("init_ms",), 1.0),
    ("proxy CPU to its initialize answer (ms)", "session", ("init_cpu_ms",), 1.0),
    ("start -> tools/list complete, 425 tools, fresh data folder (ms)", "fresh", ("list_ms",), 1.0),
    ("start -> tools/list complete, 425 tools (ms)", "session", ("list_ms",), 1.0),
    ("tools/list again, 425 tools (ms)", "session", ("list_warm_ms",), 1.0),
    ("start -> tools/list complete, 12 x 100 tools (ms)", "many", ("list_ms",), 1.0),
    ("start -> tools/list complete, 3 x 425 tools (ms)", "three", ("list_ms",), 1.0),
    ("tools/call p50 / p90 / p99 (us)", "session", ("call_p50_us", "call_p90_us", "call_p99_us"), 1.0),
    ("added p50 vs direct (us)", "session", ("added_p50_us",), 1.0),
    ("calls/s, 16 / 64 in flight", "session", ("calls_per_s_16", "calls_per_s_64"), 1.0),
    ("proxy CPU per call, sequential / 64 in flight (us)", "session", ("cpu_us_per_call", "cpu_us_per_call_64"), 1.0),
    ("RSS idle (MB)", "session", ("vmrss_idle_kb",), 1 / 1024),
    ("1 MB / 20 MB JSON result (ms)", "session", ("blob_1mb_ms", "blob_20mb_ms"), 1.0),
    ("20 MB result's reply to the engine (MB)", "session", ("blob_20mb_reply_bytes",), 1e-6),
)


def _machine_line(figures: dict[str, Any]) -> str:
    m = figures["machine"]
    loads = [m.get("loadavg"), m.get("loadavg_end")]
    said = "/".join(f"{v[0]:.1f}" if v else "?" for v in loads)
    return (f"Machine: {m['cpu']}, {m['cores']} cores, {m['implementation']} {m['python']}, Linux {m['kernel']}; "
            f"load average {said} at the start/end. Command: `{figures['command']}` ({figures['duration_s']:.0f} s).")


def _main_table(figures: dict[str, Any]) -> list[str]:
    names = figures["candidates"]
    lines = ["| figure | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for label, case, keys, scale in ROWS:
        lines.append(f"| {label} | " + " | ".join(_cells(figures, n, *keys, case=case, scale=scale) for n in names) + " |")
    return lines


def _http_table(figures: dict[str, Any]) -> list[str]:
    if not figures["medians"].get("http", {}).get("sidecar"):
        return ["Over Streamable HTTP: not measured in this run."]
    paired = _get(figures, "http", "sidecar", "http_stdio_added_p50_us") is not None
    if paired:  # every figure of the table from the same alternating blocks (bench.http_calls)
        stdio = _get(figures, "http", "sidecar", "http_stdio_added_p50_us")
        stdio_cpu = _get(figures, "http", "sidecar", "http_stdio_cpu_us")
        baseline, digits = "sidecar", 2
    else:  # a run from before the blocks: the baseline its own candidate, stdio the session case's
        stdio = _get(figures, "session", "sidecar", "added_p50_us")
        stdio_cpu = _get(figures, "session", "sidecar", "cpu_us_per_call")
        baseline, digits = "direct", 1
    direct_cpu = _get(figures, "http", baseline, "http_call_cpu_us")
    lines = ["| tools/call over HTTP | p50 / p90 / p99 (us) | added p50 (us) | beside stdio's added p50 "
             "| server CPU per call (us) |",
             "|---|---|---|---|---|",
             f"| fast upstream serving HTTP itself | {_cells(figures, baseline, 'http_call_p50_us', 'http_call_p90_us', 'http_call_p99_us', case='http')} | 0 | - | {_num(direct_cpu)} |"]
    if paired:
        lines.append(f"| sidecar on stdio, in the same blocks | {_cells(figures, 'sidecar', 'http_stdio_p50_us', 'http_stdio_p90_us', 'http_stdio_p99_us', case='http')} "
                     f"| {_num(stdio)} (over the fast upstream on stdio) | 1 x | {_num(stdio_cpu)} |")
    for mode, title in (("session", "sidecar, `Mcp-Session-Id` session"), ("stateless", "sidecar, stateless 2026-07-28")):
        trio = _cells(figures, "sidecar", *(f"http_{mode}_p{q}_us" for q in (50, 90, 99)), case="http")
        added = _get(figures, "http", "sidecar", f"http_{mode}_added_p50_us")
        ratio = _get(figures, "http", "sidecar", f"http_{mode}_added_vs_stdio")
        beside = f"{ratio:.{digits}f} x (stdio: {_num(stdio)})" if ratio is not None else "-"
        cpu, cpu_ratio = (_get(figures, "http", "sidecar", f"http_{mode}_{k}") for k in ("cpu_us", "cpu_vs_stdio"))
        cpu_cell = f"{_num(cpu)} ({cpu_ratio:.1f} x stdio's {_num(stdio_cpu)})" if cpu_ratio is not None else _num(cpu)
        lines.append(f"| {title} | {trio} | {_num(added)} | {beside} | {cpu_cell} |")
    return lines


def _in_memory(figures: dict[str, Any]) -> list[str]:
    f = figures["in_memory"]
    if "gate_default_us" not in f:
        return ["In memory: not measured in this run."]
    route = f["gate_route_only_us"]
    return [
        f"In memory, in the same run: 3 x 425 tools merged in {_num(f['merge_3x425_ms'])} ms and the full listing "
        f"encoded in {_num(f['list_3x425_ms'])} ms; the default gate chain adds {_num(f['gate_default_us'] - route)} us "
        f"over the bare route ({_num(route)} -> {_num(f['gate_default_us'])} us), {_num(f['gate_full_us'] - route)} us "
        f"with an audit file, grants and a policy rule; looking for three configured secrets in each answer costs "
        f"{_num(f['gate_with_secrets_us'] - f['gate_default_us'])} us on a small answer and {_num(f['redact_1mb_ms'])} ms "
        f"on a 1 MB one; shaping a 1 MB JSON result takes {_num(f['shape_1mb_ms'])} ms, a 20 MB one "
        f"{_num(f['shape_20mb_ms'])} ms, and a `query_result` filter over the held 20 MB {_num(f['query_20mb_ms'])} ms."]


def _start_up(figures: dict[str, Any]) -> list[str]:
    f = figures["in_memory"]
    if "runtime_ms" not in f or "prepared_cpu_ms" not in f:
        return []
    return ["", f"Start-up, same run: imports (`python -X importtime`, own times summed) cost {_num(f['interpreter_ms'])} ms "
            f"for the interpreter alone, {_num(f['direct_ms'])} ms for the fast upstream, {_num(f['early_answer_ms'])} ms "
            f"for the sidecar up to its early `initialize` answer and {_num(f['runtime_ms'])} ms for its whole runtime; "
            f"the first sight of 425 tool definitions (pins and scan, in memory) costs {_num(f['prepared_cpu_ms'])} ms "
            f"of CPU in slices, the loop's longest wait {_num(f['prepared_longest_ms_max'])} ms (the screen alone: "
            f"{_num(f['screen_only_cpu_ms'])} ms in one stretch)."]


def _targets(figures: dict[str, Any]) -> list[str]:
    lines = ["| target (sidecar) | this run | met |", "|---|---|---|"]
    for v in figures["targets"]:
        value = "-" if v.get("value") is None else f"{_num(v['value'])}{(' ' + v['unit']) if v.get('unit') not in (None, '', 'x') else ' x'}"
        met = {"pass": "met", "miss": "**missed**"}.get(v["status"], "n/a")
        lines.append(f"| {v['target'].strip()} | {value} | {met} |")
    return lines


def _floors(figures: dict[str, Any]) -> list[str]:
    """The relay targets' two ratios for the Python floors of the run (none: no line)."""
    floors = figures.get("floors") or {}
    if not floors:
        return []
    said = "; ".join(f"{name} added p50 {_num(f['added_vs_relay'])} x the relay's added, calls/s at 64 in flight "
                     f"{_num(f['calls_per_s_64_vs_relay'])} x the relay's" for name, f in floors.items())
    return ["", f"The same two relay targets read for the Python floors of this run (no gate, no catalog): {said}."]


def render_markdown(figures: dict[str, Any]) -> str:
    """The tables `docs/benchmarks.md` includes, from the figures of one run."""
    parts = [
        "<!-- Written by `python -m bench` (bench/doc_table.py) from bench-figures.json: do not edit by hand. -->",
        "", _machine_line(figures), *([f"", figures["note"]] if figures.get("note") else []), "", *_main_table(figures), "",
        "Over Streamable HTTP (sequential echo calls on one kept-alive connection, same run):", "",
        *_http_table(figures), "", *_in_memory(figures), *_start_up(figures), "", "Targets, this run:", "", *_targets(figures), *_floors(figures),
        *(["", doc_files.measured_line(figures["measured"])] if "measured" in figures else []),
    ]
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    """`python -m bench.doc_table [FIGURES.json]`: render the markdown again from the figures."""
    args = sys.argv[1:] if argv is None else argv
    source = Path(args[0]) if args else DOCS_GENERATED / FIGURES_FILE
    (source.parent / TABLE_FILE).write_text(render_docs(json.loads(source.read_text()))[TABLE_FILE])
    return 0


if __name__ == "__main__":
    sys.exit(main())
