"""Per-call figures measured side by side: every candidate's session open at once, small
blocks of calls alternated between them, each difference paired within its cycle.

Owns the echo-call figures of the main table (p50 / p90 / p99, added p50, calls/s at 16
and 64 in flight, process CPU per call, peak RSS after the calls). Why: an added latency
is the difference of two ~75 us latencies, and a run's stretches differ by more than
that difference (a relay "adding" a negative time). So a round opens one session per
candidate (each initialized and listed first), then runs `cycles` cycles; in each, every
candidate in turn (the order rotated by one each cycle, so no one is always first after
direct) gets `block_warmup` untimed calls and then a timed block of `block_calls`
sequential calls. The throughput is taken the same way, in cycles of its own before the
blocks: for each window, a short burst of `burst_calls` calls with that many in flight,
each candidate in turn. A candidate's added latency in a cycle is its block's p50 minus direct's
block p50 of the same cycle; the figure is the median over every cycle of every round.
Calls/s and CPU per call are medians over cycles too, and the ratio of calls/s to the
relay's is taken cycle by cycle (both bursts ran within the same second) before its
median. p90 and p99 pool every timed call. The same rules for every candidate: a block or
burst ends early after `block_cap_s` only once its minimum is done (slow peers), no
cycle is dropped.

The timed blocks run with this client on one core and every process of the candidate on
another (`Cores`; `pin_blocks`, on by default; the bursts run on every core). Left to
the scheduler, a block on two cores lands its processes on one core or on two by chance,
and the round trip flips between about 15 and 80 us with it, more than any proxy adds;
pinned, every call of every candidate crosses between the two cores exactly as direct's
does, so the difference is the proxy's own hop and work.

    python -m bench.paired_calls --only sidecar,py-floor --rounds 3   # the per-call rows alone
    python -m bench.paired_calls --only sidecar,py-floor --tree base=/tmp/old   # and another checkout's sidecar

`--tree LABEL=PATH` adds the sidecar of another checkout as candidate `sidecar@LABEL`,
started from PATH (its own `sidecar` package), in the same cycles as this one: a change
is read as a paired difference against the tree it started from, not across runs.

Refuses to judge: ratios to targets are `bench.report`'s.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.candidates import REPO_ROOT, Candidate, Upstream, all_candidates
from bench.blocks import threads_below
from bench.cases import Settings, percentile
from bench.client import Connection, ConnectionFailed, echo_request, find_tool
from bench.probes import cpu_seconds, memory_kb

__all__ = ["CallsRound", "Cores", "cores_to_pin", "measure_round", "place", "render_rows", "summarize"]

Progress = Callable[[str], None]


@dataclass
class _Open:
    """One candidate's open session, and what its cycles gathered."""

    name: str
    conn: Connection
    build: Callable[[int], bytes]
    times: list[float] = field(default_factory=list)  # every timed sequential call (s)
    block_p50: list[float] = field(default_factory=list)  # one per cycle (us)
    block_cpu: list[float] = field(default_factory=list)
    rates: dict[int, list[float]] = field(default_factory=dict)
    burst_cpu: dict[int, list[float]] = field(default_factory=dict)


@dataclass
class CallsRound:
    """One round's cycles: per candidate, one entry per cycle (None where a candidate
    failed from that cycle on), and the failures said in words."""

    cycles: int = 0
    block_p50_us: dict[str, list[float]] = field(default_factory=dict)
    cpu_us: dict[str, list[float]] = field(default_factory=dict)
    rates: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    burst_cpu_us: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    times_us: dict[str, list[float]] = field(default_factory=dict)
    hwm_kb: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Cores:
    """Where the sequential blocks run: this client on one core, every candidate's
    processes on another (so each call crosses between cores as direct's does, and no
    block is timed with the client and a proxy sharing a core by the scheduler's choice);
    `every` is all the cores this process may use, for the bursts."""

    client: frozenset[int]
    candidates: frozenset[int]
    every: frozenset[int]


def cores_to_pin() -> Cores | None:
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        return None
    return Cores(frozenset(allowed[:1]), frozenset(allowed[1:2]), frozenset(allowed))


def _place(running: list[_Open], cores: Cores | None, pinned: bool) -> None:
    """Pin (or free) this client and every thread of every candidate's processes (a thread
    or child started later inherits its parent's core): see `Cores`."""
    place([o.conn.pid for o in running], cores, pinned)


def place(pids: list[int], cores: Cores | None, pinned: bool) -> None:
    """`_place` by process ids (`bench.profile_calls --pin` pins its one sidecar so)."""
    if cores is None:
        return
    os.sched_setaffinity(0, cores.client if pinned else cores.every)
    for pid in pids:
        for tid in threads_below(pid):
            try:
                os.sched_setaffinity(tid, cores.candidates if pinned else cores.every)
            except OSError:
                pass  # a thread that ended meanwhile


def _cpu(pid: int) -> float:
    return cpu_seconds(pid) or 0.0


def _block(o: _Open, s: Settings) -> None:
    """Warm-up calls, then one timed block of sequential calls."""
    conn = o.conn
    conn.sequential(o.build, s.block_warmup, timeout=s.timeout_s)
    before = _cpu(conn.pid)
    times = conn.sequential(o.build, s.block_calls, s.block_cap_s, s.block_min_calls, s.timeout_s)
    o.block_cpu.append((_cpu(conn.pid) - before) / len(times) * 1e6)
    o.block_p50.append(percentile(times, 50) * 1e6)
    o.times += times


def _burst(o: _Open, window: int, s: Settings) -> None:
    conn = o.conn
    before = _cpu(conn.pid)
    done, elapsed = conn.pipelined(o.build, s.burst_calls, window, s.block_cap_s, 2 * window, s.timeout_s)
    o.rates.setdefault(window, []).append(done / elapsed)
    o.burst_cpu.setdefault(window, []).append((_cpu(conn.pid) - before) / done * 1e6)


@dataclass(frozen=True)
class TreeSidecar(Candidate):
    """The sidecar of another checkout (`--tree LABEL=PATH`): started as this one's is, from
    `tree`, so `python -m sidecar` runs that checkout's package."""

    tree: Path = REPO_ROOT

    @classmethod
    def of(cls, spec: str) -> TreeSidecar:
        label, _, path = spec.partition("=")
        if not label or not path or not (Path(path) / "sidecar" / "__main__.py").exists():
            raise SystemExit(f"--tree wants LABEL=PATH of a checkout with a sidecar package, not {spec!r}")
        return cls(f"sidecar@{label}", merges=True, tree=Path(path).resolve())

    def argv(self, upstreams: list[Upstream], workdir: Path) -> list[str]:
        return Candidate("sidecar", merges=True).argv(upstreams, workdir / self.name.replace("@", "-"))


def _open(candidate: Candidate, s: Settings, workdir: Path, stack: ExitStack) -> _Open:
    log = workdir / f"calls-{candidate.name}.stderr"
    if isinstance(candidate, TreeSidecar):
        (workdir / candidate.name.replace("@", "-")).mkdir(exist_ok=True)
    argv = candidate.argv([Upstream("gh", s.session_catalog)], workdir)
    cwd = candidate.tree if isinstance(candidate, TreeSidecar) else REPO_ROOT
    conn = stack.enter_context(Connection(argv, cwd=str(cwd), stderr_path=log))
    conn.initialize(s.timeout_s)
    names = conn.list_tools_until(s.session_catalog.tools, s.timeout_s)
    build = echo_request(find_tool(names, "echo", "gh"))
    conn.sequential(build, s.warmup_calls, timeout=s.timeout_s)
    return _Open(candidate.name, conn, build)


def _rotated(running: list[_Open], cycle: int) -> list[_Open]:
    """The candidates in this cycle's order: shifted by one each cycle, so none is always
    the first after another."""
    shift = cycle % len(running) if running else 0
    return running[shift:] + running[:shift]


def _run_step(step: Callable[[_Open], None], order: list[_Open], running: list[_Open],
              found: CallsRound, cycle: int) -> None:
    """`step` for each open candidate in `order`; one that fails leaves the round there."""
    for o in list(order):
        try:
            step(o)
        except (ConnectionFailed, OSError) as exc:
            found.errors[o.name] = f"cycle {cycle + 1}: {exc}"[:300]
            running.remove(o)
            order.remove(o)


def measure_round(candidates: list[Candidate], s: Settings, workdir: Path) -> CallsRound:
    """One round: open every candidate's session, run `s.cycles` cycles, close them."""
    found = CallsRound()
    cores = cores_to_pin() if s.pin_blocks else None
    with ExitStack() as stack:
        running: list[_Open] = []
        for candidate in candidates:
            try:
                running.append(_open(candidate, s, workdir, stack))
            except (ConnectionFailed, OSError) as exc:
                found.errors[candidate.name] = f"start: {exc}"[:300]
        gathered = list(running)
        # The bursts first, where the scheduler puts every process (a process once pinned
        # moves back only lazily, so a burst after a pinned block would run half pinned),
        # then the blocks, pinned: each phase cycles through every candidate in turn.
        for cycle in range(s.cycles):
            for window in s.windows:
                _run_step(lambda o: _burst(o, window, s), _rotated(running, cycle), running, found, cycle)
        try:
            _place(running, cores, pinned=True)
            for cycle in range(s.cycles):
                _run_step(lambda o: _block(o, s), _rotated(running, cycle), running, found, cycle)
                found.cycles += 1
        finally:
            _place([], cores, pinned=False)
        for o in gathered:
            if (memory := memory_kb(o.conn.pid)) and "VmHWM" in memory:
                found.hwm_kb[o.name] = float(memory["VmHWM"])
    for o in gathered:
        found.block_p50_us[o.name] = o.block_p50
        found.cpu_us[o.name] = o.block_cpu
        found.rates[o.name] = {str(w): v for w, v in o.rates.items()}
        found.burst_cpu_us[o.name] = {str(w): v for w, v in o.burst_cpu.items()}
        found.times_us[o.name] = [t * 1e6 for t in o.times]
    return found


def _paired(a: list[float], b: list[float], op: Callable[[float, float], float]) -> list[float]:
    """`op` of each cycle's pair; the lists are cut to the cycles both ran (a failure ends
    a candidate's list, never makes a hole in it)."""
    return [op(x, y) for x, y in zip(a, b)]


def _quartiles(values: list[float]) -> tuple[float, float]:
    if len(values) < 4:
        return (min(values), max(values))
    q = statistics.quantiles(values, n=4)
    return (q[0], q[2])


def summarize(rounds: list[CallsRound], windows: tuple[int, ...]) -> dict[str, Any]:
    """Every cycle of every round pooled: per candidate, the medians the table shows (keys
    as the session case names them), the quartiles of the paired added latency, and the
    median of each round's paired added (to show how far runs within a run agree)."""
    names = list(dict.fromkeys(n for r in rounds for n in r.block_p50_us))
    out: dict[str, Any] = {"cycles": sum(r.cycles for r in rounds), "figures": {}, "errors": {}}
    for r in rounds:
        for name, why in r.errors.items():
            out["errors"].setdefault(name, []).append(why)
    for name in names:
        figures: dict[str, float] = {}
        blocks = [v for r in rounds for v in r.block_p50_us.get(name, [])]
        if not blocks:
            continue
        times = [t for r in rounds for t in r.times_us.get(name, [])]
        figures["call_p50_us"] = statistics.median(blocks)
        figures["call_p90_us"] = percentile(times, 90)
        figures["call_p99_us"] = percentile(times, 99)
        figures["cpu_us_per_call"] = statistics.median(v for r in rounds for v in r.cpu_us.get(name, []))
        for w in windows:
            rates = [v for r in rounds for v in r.rates.get(name, {}).get(str(w), [])]
            cpus = [v for r in rounds for v in r.burst_cpu_us.get(name, {}).get(str(w), [])]
            if rates:
                figures[f"calls_per_s_{w}"] = statistics.median(rates)
                figures[f"cpu_us_per_call_{w}"] = statistics.median(cpus)
            relay = [_paired(r.rates.get(name, {}).get(str(w), []), r.rates.get("relay", {}).get(str(w), []),
                             lambda a, b: a / b) for r in rounds]
            if any(relay):
                figures[f"calls_per_s_{w}_vs_relay"] = statistics.median(v for per in relay for v in per)
        hwm = [r.hwm_kb[name] for r in rounds if name in r.hwm_kb]
        if hwm:
            figures["vmhwm_calls_kb"] = statistics.median(hwm)
        per_round = [_paired(r.block_p50_us.get(name, []), r.block_p50_us.get("direct", []), lambda a, b: a - b)
                     for r in rounds]
        added = [v for per in per_round for v in per]
        if added:
            figures["added_p50_us"] = statistics.median(added)
            figures["added_q1_us"], figures["added_q3_us"] = _quartiles(added)
            figures["added_cycles"] = float(len(added))
            out.setdefault("added_by_round", {})[name] = [statistics.median(p) for p in per_round if p]
        out["figures"][name] = figures
    return out


# -- the per-call rows alone ---------------------------------------------------------------

def render_rows(summary: dict[str, Any]) -> list[str]:
    """The per-call rows of one run, with the ratios the targets read."""
    figures: dict[str, dict[str, float]] = summary["figures"]
    relay, floor = figures.get("relay", {}), figures.get("py-floor", {})
    lines = [f"per-call figures, {summary['cycles']} cycles (paired blocks; medians over cycles):",
             f"{'candidate':10} {'p50':>7} {'added':>7} {'(q1..q3)':>15} {'/relay':>6} {'/floor':>6} "
             f"{'cpu seq':>7} {'cpu 64':>6} {'calls/s 64':>10} {'/relay':>6}"]
    for name, f in figures.items():
        def ratio(base: dict[str, float], key: str) -> str:
            return f"{f[key] / base[key]:.2f}" if key in f and base.get(key) else "-"
        added = f.get("added_p50_us")
        spread = f"({f['added_q1_us']:.1f}..{f['added_q3_us']:.1f})" if "added_q1_us" in f else ""
        lines.append(f"{name:10} {f['call_p50_us']:7.1f} {added if added is not None else float('nan'):7.1f} "
                     f"{spread:>15} {ratio(relay, 'added_p50_us'):>6} {ratio(floor, 'added_p50_us'):>6} "
                     f"{f['cpu_us_per_call']:7.1f} {f.get('cpu_us_per_call_64', float('nan')):6.2f} "
                     f"{f.get('calls_per_s_64', float('nan')):10,.0f} {f.get('calls_per_s_64_vs_relay', float('nan')):6.2f}")
    for name, medians in summary.get("added_by_round", {}).items():
        if name != "direct":
            lines.append(f"  {name}: added p50 round by round " + ", ".join(f"{m:.1f}" for m in medians))
    for name, why in summary["errors"].items():
        lines.append(f"  {name}: {len(why)} failure(s): {why[0]}")
    return lines


def main(argv: list[str] | None = None) -> int:
    import tempfile

    parser = argparse.ArgumentParser(prog="python -m bench.paired_calls", description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma separated candidates (direct and relay are always kept)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cycles", type=int, help="cycles per round")
    parser.add_argument("--no-pin", action="store_true", help="leave every process where the scheduler puts it")
    parser.add_argument("--tree", action="append", default=[], metavar="LABEL=PATH",
                        help="also another checkout's sidecar, as candidate sidecar@LABEL")
    args = parser.parse_args(argv)
    s = Settings(pin_blocks=not args.no_pin)
    if args.cycles:
        s = dataclasses.replace(s, cycles=args.cycles)
    candidates = [c for c in all_candidates() if not c.missing and not c.name.startswith("relay-")]
    if args.only:
        wanted = {"direct", "relay", *args.only.split(",")}
        candidates = [c for c in candidates if c.name in wanted]
    candidates += [TreeSidecar.of(spec) for spec in args.tree]
    rounds = []
    with tempfile.TemporaryDirectory(prefix="omb-calls-") as tmp:
        for n in range(args.rounds):
            t0 = time.perf_counter()
            rounds.append(measure_round(candidates, s, Path(tmp)))
            print(f"round {n + 1}/{args.rounds} {time.perf_counter() - t0:.1f}s", file=sys.stderr, flush=True)
    print("\n".join(render_rows(summarize(rounds, s.windows))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
