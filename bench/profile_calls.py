"""Where the sidecar's CPU goes under pipelined pass-through `tools/call`s.

Owns a bench-only profile run: the sidecar is started under cProfile (a small
wrapper, never the product's own start), driven with `window` calls in flight
by the bench client, and its profile is dumped when its stdin closes. Prints
the top functions by own time and by cumulative time.

    python -m bench.profile_calls --calls 20000 --window 64 [--out prof.pstats]
    python -m bench.profile_calls --plain --tree /work/main --tree .   # A/B, CPU per call

`--plain` runs without the profiler and prints, per tree and interleaved over
`--rounds`, the sidecar's own CPU per call (from /proc, robust on a loaded
machine) and the calls per second; `--floor` runs py-floor (`floor_proxy.py`) first
in each round, so every tree's paired ratio is to py-floor's run of the same round; `--pin`
runs the calls with the client on one core and the proxy with its upstream on another (one
at a time, the scheduler's layout otherwise decides most of the CPU a round reads).

`--counts` prints the exact number of Python function calls each call costs,
per function, and with two `--tree`s the difference: each tree is profiled at
`--calls` and at twice as many, and the first run is subtracted from the
second, so start-up, listing and warm-up cancel out. A count is noise-free on a
shared machine, where a time is not. `--opcodes` counts the bytecodes each
function runs instead (a trace of every opcode: slow, so fewer calls), which also
weighs the work inside a function that a call count does not see; `--stages` sums either
by stage of a call's way through the process (`STAGES`).

    python -m bench.profile_calls --counts --window 1 --calls 2000 --tree OLD --tree .
    python -m bench.profile_calls --opcodes --window 1 --calls 500 --tree OLD --tree .

`--http` is the same over Streamable HTTP, in a session and stateless (`bench.profile_http`).
"""

from __future__ import annotations

import argparse
import json
import pstats
import statistics
import sys
import tempfile
from pathlib import Path

from bench.candidates import PYTHON, REPO_ROOT, Upstream, upstream_argv, write_config
from bench.catalogs import GITHUB
from bench.client import Connection, echo_request, find_tool
from bench.paired_calls import cores_to_pin, place
from bench.probes import cpu_seconds

_WRAPPER = """
import cProfile, sys, atexit, time
profile, out = cProfile.Profile(time.process_time), sys.argv.pop(1)  # CPU, not wall: the machine is shared
atexit.register(lambda: profile.dump_stats(out))
from sidecar.cli import main
sys.argv[0] = "sidecar"
profile.enable()
try:
    main()
finally:
    profile.disable()
"""

# The opcode tracer both wrappers run (this one and bench/profile_http.py's): counts per code object.
OPCODE_TRACER = """
def local(frame, event, arg):
    if event == "opcode":
        counts[frame.f_code] += 1
    return local
def start(frame, event, arg):
    frame.f_trace_opcodes = True
    return local
"""

_OPCODES_WRAPPER = """
import atexit, collections, json, sys
counts, out = collections.Counter(), sys.argv.pop(1)
""" + OPCODE_TRACER + """def dump():
    sys.settrace(None)
    with open(out, "w") as file:
        json.dump([[c.co_filename, c.co_name, n] for c, n in counts.items()], file)
atexit.register(dump)
from sidecar.cli import main
sys.argv[0] = "sidecar"
sys.settrace(start)
main()
"""


def drive(argv: list[str], cwd: Path, calls: int, window: int, config: bool = True,
          pin: bool = False) -> tuple[float, float]:
    """`calls` echo calls, `window` in flight; returns (calls/s, CPU us per call). `config`:
    the sidecar's `--config PATH` is added to `argv` (py-floor takes its upstream's argv).
    `pin`: the calls run with this client on one core and the proxy and its upstream on
    another (`bench.paired_calls.Cores`), so no round lands in a layout of its own."""
    work = Path(tempfile.mkdtemp(prefix="omb-prof-"))
    given = ["--config", str(write_config([Upstream("gh", GITHUB)], work))] if config else []
    with Connection([*argv, *given], cwd=str(cwd), stderr_path=work / "stderr") as conn:
        conn.initialize(60)
        names = conn.list_tools_until(GITHUB.tools, 60)
        build = echo_request(find_tool(names, "echo", "gh"))
        cores = cores_to_pin() if pin else None
        place([conn.pid], cores, pinned=True)
        try:
            conn.sequential(build, 200)
            before = cpu_seconds(conn.pid) or 0.0
            done, elapsed = conn.pipelined(build, calls, window)
            cpu = (cpu_seconds(conn.pid) or 0.0) - before
        finally:
            place([], cores, pinned=False)
    return done / elapsed, cpu / done * 1e6


def profile_calls(calls: int, window: int, out: Path, tree: Path = REPO_ROOT) -> pstats.Stats:
    """Run `calls` echo calls, `window` in flight, through a profiled sidecar."""
    rate, _ = drive([PYTHON, "-c", _WRAPPER, str(out)], tree, calls, window)
    print(f"{rate:,.0f} calls/s under the profiler", file=sys.stderr)
    return pstats.Stats(str(out))


def _keyed(rows: list[tuple[str, str, int]], tree: Path) -> dict[str, int]:
    """Counts per function, keyed by tree-relative place (so two trees compare)."""
    found: dict[str, int] = {}
    for file, name, n in rows:
        key = f"{file.removeprefix(str(tree) + '/')}:{name}"
        found[key] = found.get(key, 0) + n
    return found


def _function_calls(tree: Path, calls: int, window: int, out: Path) -> dict[str, int]:
    """Primitive+recursive calls per function, from cProfile."""
    stats = profile_calls(calls, window, out, tree).stats  # type: ignore[attr-defined]
    return _keyed([(file, name, int(row[1])) for (file, _line, name), row in stats.items()], tree)


def _opcodes(tree: Path, calls: int, window: int, out: Path) -> dict[str, int]:
    """Bytecodes run per function, from an opcode trace."""
    drive([PYTHON, "-c", _OPCODES_WRAPPER, str(out)], tree, calls, window)
    with open(out) as file:
        return _keyed([(file_, name, int(n)) for file_, name, n in json.load(file)], tree)


def per_call_counts(tree: Path, calls: int, window: int, opcodes: bool = False) -> dict[str, float]:
    """What each echo call costs in `tree`'s sidecar, per function: run at 2N minus run at N."""
    work = Path(tempfile.mkdtemp(prefix="omb-counts-"))
    count = _opcodes if opcodes else _function_calls
    once = count(tree, calls, window, work / "once")
    twice = count(tree, 2 * calls, window, work / "twice")
    return {key: (n - once.get(key, 0)) / calls for key, n in twice.items() if n != once.get(key, 0)}


# Where each function sits in a pass-through `tools/call`'s way through the process, in
# order; the first pattern that fits a function names its stage (`file:function`, or a
# file or folder prefix). Framing, the depth scan and the outbox serve both pipes.
STAGES: list[tuple[str, tuple[str, ...]]] = [
    ("read and split lines (both pipes)", ("sidecar/front/stdio.py:data_received", "sidecar/upstream/stdio.py:data_received",
                                           "sidecar/wire/framing.py", "sidecar/wire/reader.py")),
    ("engine envelope decode (and depth scans)", ("sidecar/wire/jsonrpc.py:decode_engine_frame", "sidecar/wire/jsonrpc.py:_decode_strict",
                                                 "sidecar/wire/jsonrpc.py:_envelope", "sidecar/wire/jsonrpc.py:_judged",
                                                 "sidecar/wire/jsonrpc.py:_valid_id", "sidecar/wire/duplicates.py",
                                                 "sidecar/wire/depth.py")),
    ("dispatcher (params typed, task, answer)", ("sidecar/front/dispatcher.py", "sidecar/wire/requests.py", "sidecar/concurrency.py",
                                                 "_weakrefset.py")),
    ("tools/call method", ("sidecar/front/methods.py", "sidecar/front/confirming.py", "sidecar/front/eras/asking.py",
                           "sidecar/gate/answer.py", "sidecar/wire/task_shapes.py", "sidecar/hub/session.py")),
    # `Gate.start`, a plain call's in-place resolve and send (`inline.start_call` until round 40)
    ("route upstream", ("sidecar/gate/route.py", "sidecar/gate/chain.py:start", "sidecar/gate/inline.py:start_call",
                        "sidecar/upstream/pool.py", "sidecar/upstream/supervisor.py:ready_connection",
                        "sidecar/upstream/supervisor.py:state", "sidecar/upstream/lifecycle.py")),
    ("gate chain stages and record", ("sidecar/gate/", "sidecar/catalog/", "sidecar/redact.py")),
    ("upstream request encode and write", ("sidecar/upstream/connection.py:start_request", "sidecar/upstream/connection.py:send_call",
                                           "sidecar/upstream/connection.py:request",
                                           "sidecar/upstream/connection.py:__init__", "sidecar/wire/ids.py:allocate",
                                           "sidecar/wire/jsonrpc.py:encode_request", "sidecar/upstream/channel.py",
                                           "sidecar/upstream/stdio.py")),
    ("upstream answer decode and match", ("sidecar/upstream/supervisor.py:feed", "sidecar/upstream/connection.py",
                                          "sidecar/wire/ids.py", "sidecar/wire/jsonrpc.py:decode_upstream_frame")),
    ("answer encode and write (and the outboxes)", ("sidecar/front/stdio.py", "sidecar/wire/events.py", "sidecar/wire/jsonrpc.py",
                                                    "sidecar/wire/outbox.py")),
]


def stage_of(key: str) -> str:
    """The stage a `file:function` key belongs to (STAGES), or "other"."""
    for stage, patterns in STAGES:
        if any(key.startswith(p) or (":" not in p and p in key) for p in patterns):
            return stage
    return "other"


def by_stage(counts: dict[str, float]) -> dict[str, float]:
    found: dict[str, float] = {}
    for key, n in counts.items():
        found[stage_of(key)] = found.get(stage_of(key), 0.0) + n
    return found


def print_counts(trees: list[Path], calls: int, window: int, top: int, opcodes: bool = False,
                 stages: bool = False) -> None:
    """Per-call counts of one tree, or of the last tree against the first (by stage, with `stages`)."""
    seen = [per_call_counts(tree, calls, window, opcodes) for tree in trees]
    if stages:
        seen = [by_stage(counts) for counts in seen]
    first, last = seen[0], seen[-1]
    print(f"{'bytecodes' if opcodes else 'function calls'} per call: {sum(first.values()):.1f}" +
          (f" -> {sum(last.values()):.1f}" if len(seen) > 1 else ""))
    order = [stage for stage, _ in STAGES] + ["other"]
    rows = sorted(set(first) | set(last), key=lambda k: order.index(k) if stages else
                  -abs(last.get(k, 0) - first.get(k, 0)) if len(seen) > 1 else -first[k])
    for key in rows[:top]:
        before, after = first.get(key, 0.0), last.get(key, 0.0)
        print(f"{before:8.2f} {after:8.2f} {after - before:+8.2f}  {key}" if len(seen) > 1
              else f"{before:8.2f}  {key}")


FLOOR = Path("py-floor")  # `--floor`: bench/floor_proxy.py, run beside the trees as if it were one


def _drive_one(tree: Path, calls: int, window: int, pin: bool) -> tuple[float, float]:
    if tree == FLOOR:
        floor = [PYTHON, str(REPO_ROOT / "bench" / "floor_proxy.py"), "--", *upstream_argv(GITHUB)]
        return drive(floor, REPO_ROOT, calls, window, config=False, pin=pin)
    return drive([PYTHON, "-m", "sidecar"], tree, calls, window, pin=pin)


def compare(trees: list[Path], calls: int, window: int, rounds: int, pin: bool = False) -> None:
    """Interleaved plain runs of each tree's sidecar (and py-floor, given as `FLOOR`): A B A B ..."""
    seen: dict[Path, list[tuple[float, float]]] = {tree: [] for tree in trees}
    for _ in range(rounds):
        for tree in trees:
            seen[tree].append(_drive_one(tree, calls, window, pin))
    first = seen[trees[0]]
    for tree, runs in seen.items():
        rates = sorted(r for r, _ in runs)
        cpus = sorted(c for _, c in runs)
        # Each round's ratio to the first tree's run of the same round: the machine's mood
        # of that moment is shared by both, so the ratio swings less than either figure.
        paired = sorted(c / base for (_, c), (_, base) in zip(runs, first))
        print(f"{tree}: calls/s {rates[0]:,.0f}-{rates[-1]:,.0f} (median {statistics.median(rates):,.0f}); "
              f"CPU us/call {cpus[0]:.2f}-{cpus[-1]:.2f} (median {statistics.median(cpus):.2f}); "
              f"CPU against the first tree, round by round {paired[0]:.3f}-{paired[-1]:.3f} "
              f"(median {statistics.median(paired):.3f})")


def main(argv: list[str] | None = None) -> int:
    if "--http" in (sys.argv[1:] if argv is None else argv):
        from bench.profile_http import main as http_main

        return http_main(argv)
    parser = argparse.ArgumentParser(prog="python -m bench.profile_calls")
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--window", type=int, default=64)
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "sidecar-calls.pstats")
    parser.add_argument("--top", type=int, default=45)
    parser.add_argument("--plain", action="store_true", help="no profiler: CPU per call of each --tree")
    parser.add_argument("--tree", type=Path, action="append", help="a checkout whose sidecar runs (--plain)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--floor", action="store_true", help="with --plain: py-floor too, first, as the base of the ratios")
    parser.add_argument("--pin", action="store_true", help="with --plain: this client on one core, the proxy on another")
    parser.add_argument("--counts", action="store_true", help="exact function calls per call (of each --tree)")
    parser.add_argument("--opcodes", action="store_true", help="exact bytecodes per call (of each --tree)")
    parser.add_argument("--stages", action="store_true", help="with --counts or --opcodes: summed by stage of the call's way")
    args = parser.parse_args(argv)
    if args.counts or args.opcodes:
        print_counts([t.resolve() for t in args.tree or [REPO_ROOT]], args.calls, args.window, args.top, args.opcodes,
                     args.stages)
        return 0
    if args.plain:
        trees = [t.resolve() for t in args.tree or [REPO_ROOT]]
        compare([FLOOR, *trees] if args.floor else trees, args.calls, args.window, args.rounds, args.pin)
        return 0
    stats = profile_calls(args.calls, args.window, args.out)
    stats.sort_stats("tottime").print_stats(args.top)
    stats.sort_stats("cumulative").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
