"""One measurement of one candidate: the benchmark cases.

Owns what is timed and how, for a single round: `measure_session` (start to
`initialize`, start to a complete `tools/list`, memory idle and after large results,
large results; the echo calls are `bench.paired_calls`, every candidate side by side) and
`measure_catalog` (start to a complete `tools/list` with several upstreams).
Each returns a flat dict of named figures; the runner repeats and interleaves
them. (Layout build, timed in memory without processes, is `bench.layouts`.)

Refuses to judge: no ratios or targets here (see `report`).
"""

from __future__ import annotations

import math
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from bench.candidates import REPO_ROOT, Candidate, Upstream
from bench.catalogs import GITHUB, CatalogSpec, github_set, server_set
from bench.client import Connection, find_tool
from bench.probes import cpu_seconds, memory_kb

__all__ = ["Settings", "measure_catalog", "measure_fresh", "measure_session", "percentile"]

Figures = dict[str, float]


@dataclass(frozen=True)
class Settings:
    """How much work a round does; `quick()` is the smoke-sized version."""

    rounds: int = 5
    seq_calls: int = 3000
    pipe_calls: int = 4000
    windows: tuple[int, ...] = (16, 64)
    phase_cap_s: float = 4.0
    # the per-call figures (bench.paired_calls): cycles per round, each a timed block of
    # sequential calls and a burst per window for every candidate in turn
    cycles: int = 24
    block_calls: int = 100
    block_warmup: int = 10
    block_min_calls: int = 20
    block_cap_s: float = 0.05
    burst_calls: int = 1500
    pin_blocks: bool = True  # the timed blocks with this client and the candidate on separate cores
    min_calls: int = 200
    warmup_calls: int = 200
    blob_sizes: tuple[int, ...] = (1_000_000, 20_000_000)
    blob_repeats: int = 3
    blob_cap_s: float = 10.0
    session_catalog: CatalogSpec = GITHUB
    many: tuple[CatalogSpec, ...] = field(default_factory=lambda: tuple(server_set(12, 100)))
    three: tuple[CatalogSpec, ...] = field(default_factory=lambda: tuple(github_set(3)))
    timeout_s: float = 60.0
    layout_repeats: int = 5

    @classmethod
    def quick(cls) -> Settings:
        return cls(rounds=1, seq_calls=300, pipe_calls=300, phase_cap_s=1.0, min_calls=50,
                   warmup_calls=20, blob_repeats=1, blob_cap_s=3.0, layout_repeats=1,
                   cycles=4, block_calls=50, burst_calls=300)


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(q / 100 * len(ordered))))
    return ordered[rank - 1]


def _memory(pid: int, label: str, keys: tuple[str, ...] = ("VmRSS", "VmHWM")) -> Figures:
    found = memory_kb(pid) or {}
    return {f"{key.lower()}_{label}_kb": float(found[key]) for key in keys if key in found}


def _blob_phases(conn: Connection, blob: str, s: Settings) -> Figures:
    figures: Figures = {}
    for size in s.blob_sizes:
        conn.call(blob, {"bytes": size, "prepare": True}, s.timeout_s)
        times: list[float] = []
        stop = time.perf_counter() + s.blob_cap_s
        for _ in range(s.blob_repeats):
            start = time.perf_counter()
            result = conn.call(blob, {"bytes": size}, s.timeout_s)
            times.append(time.perf_counter() - start)
            if time.perf_counter() > stop:
                break
        label = f"{size // 1_000_000}mb" if size >= 1_000_000 else f"{size // 1000}kb"
        figures[f"blob_{label}_ms"] = statistics.median(times) * 1e3
        figures[f"blob_{label}_reply_bytes"] = float(len(result))
    return figures


def measure_session(candidate: Candidate, s: Settings, workdir: Path, log: Path) -> Figures:
    """One connection through `candidate` to one upstream of `s.session_catalog`."""
    upstreams = [Upstream("gh", s.session_catalog)]
    with Connection(candidate.argv(upstreams, workdir), cwd=str(REPO_ROOT), stderr_path=log) as conn:
        figures: Figures = {"init_ms": conn.initialize(s.timeout_s) * 1e3}
        if (cpu := cpu_seconds(conn.pid)) is not None:  # the proxy's own CPU up to its answer
            figures["init_cpu_ms"] = cpu * 1e3
        names = conn.list_tools_until(s.session_catalog.tools, s.timeout_s)
        figures["list_ms"] = (time.perf_counter() - conn.started) * 1e3
        figures["list_bytes"] = float(conn.list_bytes)
        figures["list_warm_ms"] = _warm_list_ms(conn, s.timeout_s)
        figures |= _memory(conn.pid, "idle")
        figures |= _blob_phases(conn, find_tool(names, "blob", "gh"), s)
        figures |= _memory(conn.pid, "blobs", ("VmHWM",))
        return figures


def _warm_list_ms(conn: Connection, timeout: float, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        conn.list_tools(timeout)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def _aliases(specs: tuple[CatalogSpec, ...]) -> list[Upstream]:
    width = len(str(len(specs)))
    return [Upstream(f"s{i + 1:0{width}d}", spec) for i, spec in enumerate(specs)]


def _complete_list(argv: list[str], expected: int, log: Path, timeout: float) -> tuple[float, int]:
    """Spawn, initialize, list until complete; returns (finish time, list bytes)."""
    with Connection(argv, cwd=str(REPO_ROOT), stderr_path=log) as conn:
        conn.initialize(timeout)
        conn.list_tools_until(expected, timeout)
        return time.perf_counter(), conn.list_bytes


def measure_catalog(candidate: Candidate, specs: tuple[CatalogSpec, ...], s: Settings,
                    workdir: Path, log: Path) -> Figures:
    """Start to complete `tools/list` over `specs`: merged, or one process each at once."""
    upstreams = _aliases(specs)
    expected = sum(spec.tools for spec in specs)
    start = time.perf_counter()
    if candidate.merges:
        end, size = _complete_list(candidate.argv(upstreams, workdir), expected, log, s.timeout_s)
        return {"list_ms": (end - start) * 1e3, "list_bytes": float(size), "tools": float(expected)}
    jobs = [(candidate.argv([up], workdir), up.spec.tools) for up in upstreams]
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        done = list(pool.map(lambda job: _complete_list(job[0], job[1], log, s.timeout_s), jobs))
    return {"list_ms": (max(end for end, _ in done) - start) * 1e3,
            "list_bytes": float(sum(size for _, size in done)), "tools": float(expected)}


def measure_fresh(candidate: Candidate, s: Settings, workdir: Path, log: Path) -> Figures:
    """Start to `initialize` and to a complete `tools/list` of `s.session_catalog` with a
    data folder that was never used (as every new container starts): the sidecar has no
    pins yet, so its first sight of the 425 tools is in the time."""
    fresh = Path(tempfile.mkdtemp(prefix="fresh-", dir=workdir))
    upstreams = [Upstream("gh", s.session_catalog)]
    with Connection(candidate.argv(upstreams, fresh), cwd=str(REPO_ROOT), stderr_path=log) as conn:
        figures: Figures = {"init_ms": conn.initialize(s.timeout_s) * 1e3}
        conn.list_tools_until(s.session_catalog.tools, s.timeout_s)
        figures["list_ms"] = (time.perf_counter() - conn.started) * 1e3
        if (cpu := cpu_seconds(conn.pid)) is not None:
            figures["list_cpu_ms"] = cpu * 1e3
        return figures
