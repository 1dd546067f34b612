"""From a run's medians to ratios, targets and a printable table.

Owns judgement and presentation: each figure as a ratio to direct and to the
relay measured in the same run, the added latency of every proxy (paired with
direct's block of the same cycle: `bench.paired_calls`) against the relay's and FastMCP's, the issue's targets as pass/miss
with the margin, and the text table. `derive` adds `derived` and `targets` to
the results dict (so the JSON carries them); `render` returns lines of text.

Refuses to print: `bench.__main__` prints what `render` returns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["NOT_IN_CASE", "derive", "render"]

Results = dict[str, Any]
NOT_IN_CASE = "not measured in this case"


@dataclass(frozen=True)
class Metric:
    """One table row: where the figure lives, how to show it, which way is better."""

    case: str
    key: str
    label: str
    scale: float = 1.0
    digits: int = 1
    higher_is_better: bool = False


METRICS = (
    Metric("session", "init_ms", "start -> initialize (ms)"),
    Metric("session", "init_cpu_ms", "  proxy CPU to that answer (ms)"),
    Metric("fresh", "list_ms", "start -> tools/list complete, 425, fresh data folder (ms)"),
    Metric("session", "list_ms", "start -> tools/list complete, 425 (ms)"),
    Metric("session", "list_warm_ms", "tools/list again, 425 (ms)", digits=2),
    Metric("session", "list_bytes", "tools/list reply, 425 (KB)", 1e-3, 0),
    Metric("many", "list_ms", "start -> tools/list complete, 12x100 (ms)"),
    Metric("three", "list_ms", "start -> tools/list complete, 3x425 (ms)"),
    Metric("session", "call_p50_us", "echo call p50 (us)"),
    Metric("session", "call_p90_us", "echo call p90 (us)"),
    Metric("session", "call_p99_us", "echo call p99 (us)"),
    Metric("session", "added_p50_us", "added p50 vs direct (us)"),
    Metric("session", "added_vs_relay", "  / relay's added", digits=2),
    Metric("session", "added_vs_fastmcp", "  / fastmcp's added", digits=4),
    Metric("session", "calls_per_s_16", "calls/s, 16 in flight", digits=0, higher_is_better=True),
    Metric("session", "calls_per_s_64", "calls/s, 64 in flight", digits=0, higher_is_better=True),
    Metric("session", "cpu_us_per_call", "process CPU per call, sequential (us)"),
    Metric("session", "cpu_us_per_call_64", "process CPU per call, 64 in flight (us)"),
    Metric("session", "vmrss_idle_kb", "RSS idle (MB)", 1 / 1024),
    Metric("session", "vmhwm_calls_kb", "peak RSS after calls (MB)", 1 / 1024),
    Metric("session", "blob_1mb_ms", "blob 1 MB result (ms)"),
    Metric("session", "blob_20mb_ms", "blob 20 MB result (ms)"),
    Metric("session", "blob_20mb_reply_bytes", "blob 20 MB reply size (MB)", 1e-6, 2),
    Metric("session", "vmhwm_blobs_kb", "peak RSS after blobs (MB)", 1 / 1024),
)
_NO_RATIO = {"added_p50_us", "added_vs_relay", "added_vs_fastmcp", "list_bytes",
             "blob_20mb_reply_bytes", "init_cpu_ms"}


def _median(results: Results, case: str, candidate: str, key: str) -> float | None:
    entry = results["cases"].get(case, {}).get("results", {}).get(candidate, {})
    value = entry.get("median", {}).get(key)
    return float(value) if value is not None else None


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b is not None and b > 0 else None


def _added_latency(results: Results) -> None:
    """Adds the ratios of added_p50_us to the session medians, in place. The added p50 is
    the paired one of `bench.paired_calls` (each cycle's block minus direct's block of the
    same cycle, its median over cycles); a run that has none (a results file of before)
    gets the difference of the two medians."""
    session = results["cases"]["session"]["results"]
    direct = _median(results, "session", "direct", "call_p50_us")
    for entry in session.values():
        p50 = entry.get("median", {}).get("call_p50_us")
        if p50 is not None and direct is not None and "added_p50_us" not in entry["median"]:
            entry["median"]["added_p50_us"] = p50 - direct
    relay = _median(results, "session", "relay", "added_p50_us")
    fastmcp = _median(results, "session", "fastmcp", "added_p50_us")
    for entry in session.values():
        added = entry.get("median", {}).get("added_p50_us")
        for key, base in (("added_vs_relay", relay), ("added_vs_fastmcp", fastmcp)):
            if (value := _ratio(added, base)) is not None:
                entry["median"][key] = value


def _ratios(results: Results) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for metric in METRICS:
        if metric.key in _NO_RATIO:
            continue
        row = {}
        for name in results["candidates"]:
            value = _median(results, metric.case, name, metric.key)
            row[name] = {
                "x_direct": _ratio(value, _median(results, metric.case, "direct", metric.key)),
                "x_relay": _ratio(value, _median(results, metric.case, "relay", metric.key)),
            }
        table[f"{metric.case}.{metric.key}"] = row
    return table


@dataclass(frozen=True)
class Target:
    """One of the issue's targets for the sidecar: a figure, a limit, a direction."""

    label: str
    figure: Callable[[Results], float | None]
    limit: float
    at_most: bool
    unit: str = "x"


def _sidecar(case: str, key: str) -> Callable[[Results], float | None]:
    return lambda r: _median(r, case, "sidecar", key)


def _relative(case: str, key: str, base: str) -> Callable[[Results], float | None]:
    return lambda r: _ratio(_median(r, case, "sidecar", key), _median(r, case, base, key))


def _rate_vs_relay(name: str) -> Callable[[Results], float | None]:
    """Calls/s at 64 in flight over the relay's: the median of each cycle's ratio (both
    bursts ran within the same second), else the ratio of the medians."""
    def figure(r: Results) -> float | None:
        paired = _median(r, "session", name, "calls_per_s_64_vs_relay")
        return paired if paired is not None else _ratio(_median(r, "session", name, "calls_per_s_64"),
                                                        _median(r, "session", "relay", "calls_per_s_64"))
    return figure


def _over_direct(case: str, key: str) -> Callable[[Results], float | None]:
    def figure(r: Results) -> float | None:
        mine, direct = _median(r, case, "sidecar", key), _median(r, case, "direct", key)
        return mine - direct if mine is not None and direct is not None else None
    return figure


def _in_memory_figure(section: str, key: str) -> Callable[[Results], float | None]:
    def figure(r: Results) -> float | None:
        value = (r.get(section) or {}).get(key)
        return float(value) if isinstance(value, (int, float)) else None
    return figure


def _fastmcp_over_sidecar(r: Results) -> float | None:
    added = _median(r, "session", "sidecar", "added_p50_us")
    return _ratio(_median(r, "session", "fastmcp", "added_p50_us"), added)


def _merge_in_memory(r: Results) -> float | None:
    layout = r.get("layout_build") or {}
    merge, listing = layout.get("merge_3x425_ms"), layout.get("list_3x425_ms")
    return merge + listing if merge is not None and listing is not None else None


def _merge_after_arrival(r: Results) -> float | None:
    merged, direct = _median(r, "three", "sidecar", "list_ms"), _median(r, "three", "direct", "list_ms")
    return merged - direct if merged is not None and direct is not None else None


TARGETS = (
    Target("added p50 <= 2x the relay's added (1.3x worth chasing)",
           _sidecar("session", "added_vs_relay"), 2.0, True),
    Target("added p50 <= 1.3x py-floor's added", _relative("session", "added_p50_us", "py-floor"), 1.3, True),
    Target("fastmcp's added p50 >= 10x the sidecar's", _fastmcp_over_sidecar, 10.0, False),
    Target("HTTP session added p50 <= 1.5x stdio's added", _sidecar("http", "http_session_added_vs_stdio"),
           1.5, True),
    Target("HTTP stateless added p50 <= 1.5x stdio's added", _sidecar("http", "http_stateless_added_vs_stdio"),
           1.5, True),
    Target("calls/s at 64 in flight >= 0.75x the relay's", _rate_vs_relay("sidecar"), 0.75, False),
    Target("start -> initialize <= direct + 30 ms (sidecar minus direct)", _over_direct("session", "init_ms"),
           30.0, True, " ms"),
    Target("start -> tools/list 425 <= 1.3x direct", _relative("session", "list_ms", "direct"),
           1.3, True),
    Target("start -> tools/list 425, fresh data folder <= 1.3x direct", _relative("fresh", "list_ms", "direct"),
           1.3, True),
    Target("start -> tools/list 3x425 <= 1.5x direct", _relative("three", "list_ms", "direct"), 1.5, True),
    Target("first sight of 425 definitions <= 150 ms CPU in all (in memory)",
           _in_memory_figure("first_sight", "prepared_cpu_ms"), 150.0, True, " ms"),
    Target("  and never more than 5 ms of the loop at a time (longest stall, CPU)",
           _in_memory_figure("first_sight", "prepared_longest_ms_max"), 5.0, True, " ms"),
    Target("RSS idle <= 30 MB", lambda r: _scaled(_sidecar("session", "vmrss_idle_kb")(r)),
           30.0, True, " MB"),
    Target("1,275 tools of 3 upstreams merged+listed+encoded < 20 ms (in memory)",
           _merge_in_memory, 20.0, True, " ms"),
    Target("  same, end to end: start->list 3x425 minus direct x3's (approx.)",
           _merge_after_arrival, 20.0, True, " ms"),
)


def _scaled(kb: float | None) -> float | None:
    return kb / 1024 if kb is not None else None


def _judge(target: Target, results: Results) -> dict[str, Any]:
    value = target.figure(results)
    if value is None:
        return {"target": target.label, "status": "n/a", "value": None, "limit": target.limit}
    ok = value <= target.limit if target.at_most else value >= target.limit
    margin = (target.limit - value) if target.at_most else (value - target.limit)
    return {"target": target.label, "status": "pass" if ok else "miss", "value": value,
            "limit": target.limit, "margin": margin, "unit": target.unit.strip()}


def derive(results: Results) -> Results:
    """Adds added latency, ratio tables and target verdicts to `results` (in place)."""
    _added_latency(results)  # the http case pairs its own (bench.http_calls)
    results["ratios"] = _ratios(results)
    results["targets"] = [_judge(target, results) for target in TARGETS]
    results["floors"] = _floors(results)
    return results


FLOORS = (("py-floor", "the least a Python asyncio proxy does"),
          ("py-threads", "the same on blocking threads, no event loop"))


def _floors(results: Results) -> dict[str, dict[str, float]]:
    """The first two targets' ratios for each Python floor in the run: what they ask of any
    proxy in Python (a floor missing from the run is left out)."""
    out = {}
    for name, _ in FLOORS:
        added, rate = _median(results, "session", name, "added_vs_relay"), _rate_vs_relay(name)(results)
        if added is not None and rate is not None:
            out[name] = {"added_vs_relay": added, "calls_per_s_64_vs_relay": rate}
    return out


# -- text ------------------------------------------------------------------

def _cell(results: Results, metric: Metric, name: str) -> str:
    entry = results["cases"].get(metric.case, {}).get("results", {}).get(name, {})  # a case a run lacks: "-"
    if entry.get("status") == "missing":
        return "missing"
    value = entry.get("median", {}).get(metric.key)
    return "-" if value is None else f"{value * metric.scale:,.{metric.digits}f}"


def _ratio_cell(results: Results, metric: Metric, name: str) -> str:
    row = results["ratios"].get(f"{metric.case}.{metric.key}", {}).get(name, {})
    d, r = row.get("x_direct"), row.get("x_relay")
    if d is None and r is None:
        return "-"
    return f"{_fmt_ratio(d)}/{_fmt_ratio(r)}"


def _fmt_ratio(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


def _grid(header: list[str], rows: list[list[str]], first: int) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(1, len(header))]
    def line(row: list[str]) -> str:
        cells = "  ".join(cell.rjust(width) for cell, width in zip(row[1:], widths))
        return f"{row[0]:<{first}}  {cells}"
    return [line(header), "-" * len(line(header)), *(line(row) for row in rows)]


def _header(results: Results) -> list[str]:
    m, s = results["machine"], results["settings"]
    return [
        "omb-sidecar benchmark: medians of interleaved rounds",
        (f"machine: {m['cpu']}, {m['cores']} cores, {m['implementation']} {m['python']}, "
         f"Linux {m['kernel']}, load average {_load(m.get('loadavg'))} at start, "
         f"{_load(m.get('loadavg_end'))} at end"),
        *([f"started from {m['launched']}"] if m.get("launched") else []),
        (f"rounds: {s['rounds']}; echo calls side by side, {s.get('cycles', '?')} cycles a round: a block of "
         f"{s.get('block_calls', '?')} sequential calls{_pinned(s)} and a burst of "
         f"{s.get('burst_calls', '?')} per window, each candidate in turn; run took {results['duration_s']} s"),
        ("direct/relay with several upstreams: that many processes started at once, time until "
         "the last is listed; direct's memory and CPU are the upstream's own"),
        "",
    ]


def _pinned(s: dict[str, Any]) -> str:
    return " (client and candidate on separate cores)" if s.get("pin_blocks") else ""


def _load(values: list[float] | None) -> str:
    return "/".join(f"{v:.1f}" for v in values) if values else "?"


def render(results: Results) -> list[str]:
    """The whole report as lines: header, figures, ratios, targets, missing candidates."""
    names = list(results["candidates"])
    first = max(len(metric.label) for metric in METRICS)
    lines = _header(results)
    rows = [[m.label, *(_cell(results, m, n) for n in names)] for m in METRICS]
    lines += _grid(["figure", *names], rows, first)
    lines += ["", "ratios: x direct / x relay"]
    ratio_rows = [[m.label, *(_ratio_cell(results, m, n) for n in names)]
                  for m in METRICS if m.key not in _NO_RATIO]
    lines += _grid(["figure", *names], ratio_rows, first)
    lines += ["", "targets (sidecar, this run):"]
    for verdict in results["targets"]:
        lines.append("  " + _verdict(verdict))
    lines += _floor(results)
    lines += _added_spread(results, names)
    lines += _http(results)
    lines += _layouts(results.get("layout_build") or {})
    lines += _gate(results.get("gate") or {})
    lines += _start_up(results)
    lines += _missing(results)
    return lines


def _floor(results: Results) -> list[str]:
    """The same two ratios for the Python floors (`_floors`)."""
    said = dict(FLOORS)
    return [f"  ({name}, {said[name]}: added p50 {f['added_vs_relay']:.2f}x the relay's added, "
            f"calls/s at 64 in flight {f['calls_per_s_64_vs_relay']:.2f}x the relay's)"
            for name, f in (results.get("floors") or {}).items()]


def _http(results: Results) -> list[str]:
    """The HTTP case: each figure beside the stdio ones it compares with, all from the
    same alternating blocks (`bench.http_calls`)."""
    sidecar = results["cases"].get("http", {}).get("results", {}).get("sidecar", {}).get("median")
    if not sidecar:
        return ["", "tools/call over HTTP: not measured (the sidecar missing in this run)"]

    def trio(prefix: str) -> str:
        return " / ".join(f"{sidecar.get(f'{prefix}_p{q}_us', float('nan')):,.0f}" for q in (50, 90, 99))

    stdio = sidecar.get("http_stdio_added_p50_us", float("nan"))
    lines = ["", "tools/call over Streamable HTTP (sequential echo, one kept-alive connection, in alternating "
             "blocks with stdio; us p50 / p90 / p99):",
             f"  fast upstream serving HTTP itself (aiohttp): {trio('http_call')}",
             f"  sidecar on stdio, same blocks: {trio('http_stdio')}; added p50 {stdio:,.1f}"]
    for mode, title in (("session", "sidecar, Mcp-Session-Id session"), ("stateless", "sidecar, stateless 2026-07-28")):
        added, ratio = sidecar.get(f"http_{mode}_added_p50_us"), sidecar.get(f"http_{mode}_added_vs_stdio")
        said = f"; added p50 {added:,.1f}" if added is not None else ""
        said += f" ({ratio:.2f}x the sidecar's stdio added, {stdio:,.1f})" if ratio is not None else ""
        lines.append(f"  {title}: {trio(f'http_{mode}')}{said}")
    return lines


def _layouts(figures: dict[str, Any]) -> list[str]:
    if "error" in figures or not figures:
        return ["", f"layout build (in memory): not measured: {figures.get('error', 'no figures')}"]
    full = figures.get("layout_full_bytes") or 1.0
    rows = [[name, f"{figures[f'layout_{name}_ms']:.2f}", f"{figures[f'layout_{name}_encode_ms']:.2f}",
             f"{figures[f'layout_{name}_tools']:.0f}", f"{figures[f'layout_{name}_bytes'] / 1e3:,.0f}",
             f"{100 * (1 - figures[f'layout_{name}_bytes'] / full):.0f}%"]
            for name in ("full", "bridged", "trio", "cap") if f"layout_{name}_ms" in figures]
    title = (f"layout build (in memory; face of {figures['face_tools']:.0f} tools: platform 39 + "
             f"425 + 12x100; catalog merge {figures['merge_face_ms']:.1f} ms; 3x425 merge "
             f"{figures['merge_3x425_ms']:.1f} ms + full listing encoded {figures['list_3x425_ms']:.1f} ms)")
    header = ["layout", "build ms", "encode ms", "tools", "bytes (KB)", "smaller than full"]
    return ["", title, *_grid(header, rows, 8), _bridged_platform(figures)]


def _gate(figures: dict[str, Any]) -> list[str]:
    if "error" in figures or not figures:
        return ["", f"gate (in memory): not measured: {figures.get('error', 'no figures')}"]
    route = figures["gate_route_only_us"]
    return [
        "",
        "gate (in memory, an upstream answering on the next loop turn; us per pass-through call):",
        f"  route alone {route:.1f}; default chain {figures['gate_default_us']:.1f} "
        f"(+{figures['gate_default_us'] - route:.1f}); full chain with audit file, grants and a policy rule "
        f"{figures['gate_full_us']:.1f} (+{figures['gate_full_us'] - route:.1f})",
        f"  shaping a JSON result: 1 MB {figures['shape_1mb_ms']:.1f} ms, 20 MB {figures['shape_20mb_ms']:.1f} ms; "
        f"query_result (filter + projection) over the held 20 MB: {figures['query_20mb_ms']:.1f} ms",
        *_redaction(figures),
    ]


def _start_up(results: Results) -> list[str]:
    """The runtime's import time and the first sight of a big server, in memory."""
    imports, sight = results.get("imports") or {}, results.get("first_sight") or {}
    lines = [""]
    if "runtime_ms" in imports:
        lines.append(f"imports (python -X importtime, own times summed, min of repeats): interpreter "
                     f"{imports['interpreter_ms']:.1f} ms, the fast upstream's {imports['direct_ms']:.1f} ms, the sidecar "
                     f"before its early initialize answer {imports['early_answer_ms']:.1f} ms, its whole runtime "
                     f"{imports['runtime_ms']:.1f} ms")
    if "prepared_cpu_ms" in sight:
        lines.append(f"first sight of {sight['tools']:.0f} definitions (in memory, CPU): screen alone "
                     f"{sight['screen_only_cpu_ms']:.1f} ms in one stretch (longest stall {sight['screen_only_longest_ms']:.1f}); "
                     f"prepared in slices {sight['prepared_cpu_ms']:.1f} ms, longest stall {sight['prepared_longest_ms_max']:.2f} ms "
                     f"(wall {sight['prepared_longest_wall_ms_max']:.1f}); same verdict: {bool(sight['same_verdict'])}")
    return lines if len(lines) > 1 else []


def _redaction(figures: dict[str, Any]) -> list[str]:
    if "gate_with_secrets_us" not in figures:
        return []
    added = figures["gate_with_secrets_us"] - figures["gate_default_us"]
    return [f"  three secrets configured: default chain {figures['gate_with_secrets_us']:.1f} (+{added:.1f} to "
            f"look for them in each answer); a 1 MB answer without them {figures['redact_1mb_ms']:.2f} ms"]


def _bridged_platform(figures: dict[str, Any]) -> str:
    full, bridged = figures.get("platform_full_bytes"), figures.get("platform_bridged_bytes")
    if not full or bridged is None:
        return "platform catalog bridged: not measured"
    return (f"platform catalog alone: full {full / 1e3:.1f} KB ({figures['platform_full_tools']:.0f} tools), "
            f"bridged {bridged / 1e3:.1f} KB ({figures['platform_bridged_tools']:.0f} tools): "
            f"{100 * (1 - bridged / full):.0f}% smaller (seed figure 65-74%)")


def _added_spread(results: Results, names: list[str]) -> list[str]:
    """The paired added p50: its quartiles over cycles and its median in each round, to
    show how much of a ratio is noise (the relay adds little)."""
    calls = results.get("calls") or {}
    by_round = calls.get("added_by_round", {})
    lines = []
    for name in names:
        figures = calls.get("figures", {}).get(name, {})
        if name == "direct" or "added_q1_us" not in figures:
            continue
        rounds = ", ".join(f"{m:.1f}" for m in by_round.get(name, []))
        lines.append(f"  {name}: {figures['added_p50_us']:.1f} (quartiles {figures['added_q1_us']:.1f} .. "
                     f"{figures['added_q3_us']:.1f} over {figures['added_cycles']:.0f} cycles; by round: {rounds})")
    return ["", "added p50, paired with direct's block of the same cycle (us):", *lines] if lines else []


def _verdict(v: dict[str, Any]) -> str:
    if v["status"] == "n/a":
        return f"n/a   {v['target']}: no figure (a candidate is missing)"
    unit = v.get("unit", "")
    sign = "+" if v["margin"] >= 0 else ""
    return (f"{v['status'].upper():5} {v['target']}: {v['value']:.2f}{unit} vs {v['limit']:g}{unit} "
            f"(margin {sign}{v['margin']:.2f}{unit})")


def _missing(results: Results) -> list[str]:
    lines: list[str] = []
    for case, body in results["cases"].items():
        for name, entry in body["results"].items():
            if entry.get("reason") == NOT_IN_CASE:
                continue
            if entry.get("status") == "missing":
                lines.append(f"  {case}/{name}: missing: {entry.get('reason', '')[:300]}")
            elif entry.get("errors"):
                lines.append(f"  {case}/{name}: {len(entry['errors'])} failed round(s): "
                             f"{entry['errors'][0][:300]}")
    return ["", "missing or failing:", *lines] if lines else []
