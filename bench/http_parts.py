"""What the HTTP added latency is made of: the sidecar over HTTP and over stdio, beside the
fast upstream served each way, measured in one run (issue 23's decomposition).

Owns `python -m bench.http_calls --parts`: runs of `bench.http_calls.measure_blocked`,
each with every tree's sidecar open beside the same two direct servers (the fast
upstream on stdio and serving HTTP with aiohttp), all driven in alternating blocks of
sequential `tools/call`s of `echo`. Per run and tree: the added p50s (medians over
blocks of paired differences) and each server process's own CPU per call; then the
decomposition of that run:

- `http front beyond stdio` = the sidecar's CPU per call over HTTP minus over stdio
  (the core is the same, so this is the HTTP front, aiohttp's and ours, against the
  stdio front), and the same difference for the bare upstream (what aiohttp costs a
  bare app against reading stdin); what is left is what the sidecar's HTTP front costs
  beyond a bare aiohttp app, the part that is ours to cut.

Prints medians over the runs with the least value any run read; never writes the docs.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from bench.cases import Settings
from bench.http_calls import BLOCK_CALLS, measure_blocked

__all__ = ["measure_parts", "print_parts"]

Figures = dict[str, float]


def measure_parts(s: Settings, runs: int, trees: list[Path], block: int = BLOCK_CALLS,
                  sets: int = 1) -> dict[Path, list[Figures]]:
    """`runs` blocked runs, every tree's sidecar in each, beside the same direct servers."""
    seen: dict[Path, list[Figures]] = {tree: [] for tree in trees}
    for _ in range(runs):
        for tree, figures in measure_blocked(s, trees, block, sets).items():
            seen[tree].append(figures)
    return seen


def _derived(r: Figures) -> Figures:
    """One run's decomposition (see the module's words)."""
    bare = r["http_call_cpu_us"] - r["http_direct_stdio_cpu_us"]
    found = {"bare_aiohttp_cpu_us": bare}
    for mode in ("session", "stateless"):
        front = r[f"http_{mode}_cpu_us"] - r["http_stdio_cpu_us"]
        found |= {f"{mode}_front_cpu_us": front, f"{mode}_beyond_bare_cpu_us": front - bare}
    return found


SHOWN = ("http_stdio_added_p50_us", "http_session_added_p50_us", "http_stateless_added_p50_us",
         "http_session_added_vs_stdio", "http_stateless_added_vs_stdio",
         "http_direct_stdio_cpu_us", "http_call_cpu_us", "http_stdio_cpu_us", "http_session_cpu_us",
         "http_stateless_cpu_us", "bare_aiohttp_cpu_us", "session_front_cpu_us", "session_beyond_bare_cpu_us",
         "stateless_front_cpu_us", "stateless_beyond_bare_cpu_us")


def print_parts(seen: dict[Path, list[Figures]]) -> None:
    """Per tree, medians over the runs, with the least value any run read (the one the
    machine's other work disturbed least); the decomposition is taken run by run."""
    tables = {tree: [r | _derived(r) for r in runs] for tree, runs in seen.items()}
    trees = list(tables)
    print(f"{len(tables[trees[0]])} runs: median (least), per tree: " + ", ".join(str(t) for t in trees))
    for key in SHOWN:
        cells = []
        for tree in trees:
            values = sorted(r[key] for r in tables[tree] if key in r)
            cells.append(f"{statistics.median(values):8.2f} ({values[0]:8.2f})" if values else f"{'-':>19}")
        print(f"  {key:34} " + "  ".join(cells))
