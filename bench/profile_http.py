"""Where the sidecar's CPU goes per `tools/call` over Streamable HTTP (issue 23).

Owns the HTTP mode of `bench.profile_calls` (`--http`): the sidecar is started with
`--http` in front of the fast upstream on stdio (as `bench.http_calls` starts it) from
each `--tree`, and driven by the bench's raw-socket client with sequential echo calls,
in an `Mcp-Session-Id` session and as stateless 2026-07-28 requests.

`--opcodes` counts the bytecodes each function runs in the sidecar's process (an opcode
trace, installed by a bench-only wrapper, never the product's start). The trace is
snapshotted on SIGUSR1, so one process gives both phases: warm-up, snapshot, N session
calls, snapshot, N stateless calls, snapshot; each phase's count is the difference of
two snapshots over N, and start-up and listing drop out. The rows are grouped by who
runs them (aiohttp's request cycle, multidict/yarl, asyncio, the sidecar's HTTP front,
the rest of the sidecar) and, with two trees, compared. A count is exact on a shared
machine where a time is not; it does not see C code (aiohttp's parser, multidict,
uvloop), which `--plain` does.

`--plain` runs without the trace: every tree's sidecar open at once, driven in
alternating blocks (`bench.blocks`), and prints per run and tree the sidecar's own CPU
per call of each phase (from /proc) and its ratio to the first tree's, block by block.

    python -m bench.profile_calls --http --opcodes --calls 300 --tree /work/main --tree .
    python -m bench.profile_calls --http --opcodes --calls 300 --lines 40   # and the front's busiest lines
    python -m bench.profile_calls --http --plain --rounds 3 --calls 3000 --tree /work/main --tree .
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.candidates import PYTHON, REPO_ROOT
from bench.catalogs import TINY
from bench.blocks import Spread, alternate, cpu_ratios, pinned
from bench.cases import Settings
from bench.http_calls import BLOCK_CALLS, MODERN, TOKEN, Lanes, _echo_body, _open_session, _server, _sidecar_config
from bench.http_client import HttpConnection, free_port
from bench.probes import cpu_seconds

__all__ = ["main"]

_ENVELOPE: dict[str, object] = {"io.modelcontextprotocol/protocolVersion": MODERN,
                                "io.modelcontextprotocol/clientCapabilities": {}}
_STATELESS = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "fast__echo"}

# The same tracer, with each count also kept by line for the HTTP front's own files (`--lines`).
LINE_TRACER = """
def local(frame, event, arg):
    if event == "opcode":
        code = frame.f_code
        counts[code] += 1
        if "/front/http/" in code.co_filename:
            lines[(code, frame.f_lineno)] += 1
    return local
def start(frame, event, arg):
    frame.f_trace_opcodes = True
    return local
"""

# A snapshot of the counts is one dict copy (a few bytecodes, inside the next phase);
# the marker file tells the client it was taken. Everything is written at exit.
_OPCODES_WRAPPER = """
import atexit, collections, json, signal, sys
counts, out = collections.Counter(), sys.argv.pop(1)
snaps, lines, lined = [], collections.Counter(), []
""" + LINE_TRACER + """def snap(signum, frame):
    snaps.append(counts.copy())
    lined.append(lines.copy())
    open(out + ".mark", "a").close()
def dump():
    sys.settrace(None)
    with open(out, "w") as file:
        json.dump([[[c.co_filename, c.co_name, n] for c, n in s.items()] for s in snaps], file)
        json.dump([[[k[0].co_filename, f"{k[0].co_name}:{k[1]}", n] for k, n in s.items()]
                   for s in lined], open(out + ".lines", "w"))
atexit.register(dump)
signal.signal(signal.SIGUSR1, snap)
from sidecar.cli import main
sys.argv[0] = "sidecar"
sys.settrace(start)
main()
"""

_LIBRARY = re.compile(r"^.*/lib/python3\.\d+/(site-packages/)?")
Phase = tuple[str, Callable[[int], bytes], dict[str, str]]


def _argv(prefix: list[str], config: Path, port: int) -> list[str]:
    return [*prefix, "--config", str(config), "--http", f"127.0.0.1:{port}", "--token-env", "OMB_BENCH_HTTP_TOKEN"]


def _phases(session: dict[str, str]) -> list[Phase]:
    return [("session", _echo_body("fast__echo"), session),
            ("stateless", _echo_body("fast__echo", _ENVELOPE), _STATELESS)]


def _snapshot(pid: int, mark: Path, timeout: float = 60.0) -> None:
    """Ask the traced sidecar for a snapshot and wait until it has taken it."""
    mark.unlink(missing_ok=True)
    os.kill(pid, signal.SIGUSR1)
    deadline = time.monotonic() + timeout
    while not mark.exists():
        if time.monotonic() > deadline:
            raise TimeoutError("the sidecar took no snapshot")
        time.sleep(0.005)


def _warm(conn: HttpConnection, phases: list[Phase], warmup: int) -> None:
    for _, body, headers in phases:
        for i in range(warmup):
            conn.request(body(i), headers)


def opcodes_of(tree: Path, calls: int, warmup: int, lines: bool = False) -> dict[str, dict[str, float]]:
    """Bytecodes per call, per function (tree-relative), for each phase; with `lines`, also
    per line of the HTTP front's files, under `<phase>.lines`."""
    work = Path(tempfile.mkdtemp(prefix="omb-http-ops-"))
    out, port = work / "ops.json", free_port()
    argv = _argv([PYTHON, "-c", _OPCODES_WRAPPER, str(out)], _sidecar_config(TINY, work), port)
    with _server(argv, port, work / "stderr", 120.0, cwd=tree) as child, \
            HttpConnection(port, {"Authorization": f"Bearer {TOKEN}"}, 120.0) as conn:
        phases = _phases(_open_session(conn))
        _warm(conn, phases, warmup)
        _snapshot(child.pid, Path(str(out) + ".mark"))
        for _, body, headers in phases:
            for i in range(calls):
                conn.request(body(warmup + i), headers)
            _snapshot(child.pid, Path(str(out) + ".mark"))
    found: dict[str, dict[str, float]] = {}
    for suffix in ("", ".lines") if lines else ("",):
        with open(str(out) + suffix) as file:
            snaps = [_keyed(rows, tree) for rows in json.load(file)]
        for k, (name, _, _) in enumerate(phases):
            found[name + suffix] = _per_call(snaps[k], snaps[k + 1], calls)
    return found


def _keyed(rows: list[list[object]], tree: Path) -> dict[str, int]:
    found: dict[str, int] = {}
    for file, name, n in rows:
        # A library's place without the venv or Python it ran from, so two trees compare.
        place = _LIBRARY.sub("", str(file).removeprefix(str(tree) + "/"))
        key = f"{place}:{name}"
        found[key] = found.get(key, 0) + int(str(n))
    return found


def _per_call(before: dict[str, int], after: dict[str, int], calls: int) -> dict[str, float]:
    return {k: (n - before.get(k, 0)) / calls for k, n in after.items() if n != before.get(k, 0)}


# What the HTTP front builds or fills per request outside its own package: the answer
# queue, the jobs and the engine session and dispatcher of a stateless request.
_PER_REQUEST = ("sidecar/wire/outbox.py:put", "sidecar/wire/outbox.py:get", "sidecar/wire/outbox.py:discard",
                "sidecar/wire/outbox.py:__init__", "sidecar/wire/outbox.py:__len__",
                "sidecar/concurrency.py:__init__", "sidecar/concurrency.py:aclose", "sidecar/concurrency.py:running",
                "sidecar/concurrency.py:<", "sidecar/hub/session.py:__init__", "sidecar/front/dispatcher.py:__init__",
                "sidecar/wire/ids.py:__init__", "sidecar/wire/ids.py:__len__")
# Who runs a function, by where its code lives; first match wins.
_GROUPS = (
    ("aiohttp: protocol, parser callbacks", ("aiohttp/web_protocol", "aiohttp/http_parser", "aiohttp/base_protocol",
                                              "aiohttp/streams", "aiohttp/tcp_helpers")),
    ("aiohttp: Request", ("aiohttp/web_request", "aiohttp/helpers")),
    ("aiohttp: app, router, middlewares", ("aiohttp/web_app", "aiohttp/web_urldispatcher", "aiohttp/web_middlewares")),
    ("aiohttp: Response, writer", ("aiohttp/web_response", "aiohttp/http_writer", "aiohttp/abc", "aiohttp/payload")),
    ("aiohttp: other", ("aiohttp/",)),
    ("multidict, yarl", ("multidict/", "yarl/")),
    ("asyncio", ("asyncio/",)),
    ("sidecar: HTTP front", ("sidecar/front/http/",)),
    ("sidecar: the front's per-request objects", _PER_REQUEST),
    ("sidecar: 2026 era", ("sidecar/front/eras/",)),
    ("sidecar: the call (dispatcher, gate, wire, upstream)", ("sidecar/",)),
)


def group_of(key: str) -> str:
    for name, marks in _GROUPS:
        if any(mark in key for mark in marks):
            return name
    return "other (stdlib)"


def _grouped(counts: dict[str, float]) -> dict[str, float]:
    groups: dict[str, float] = {}
    for key, n in counts.items():
        groups[group_of(key)] = groups.get(group_of(key), 0.0) + n
    return groups


def print_opcodes(trees: list[Path], calls: int, warmup: int, top: int, lines: int = 0) -> None:
    seen = [opcodes_of(tree, calls, warmup, lines > 0) for tree in trees]
    for phase in [name for name in seen[0] if not name.endswith(".lines")]:
        first, last = seen[0][phase], seen[-1][phase]
        both = len(seen) > 1
        print(f"\n== {phase}: bytecodes per call {sum(first.values()):,.1f}"
              + (f" -> {sum(last.values()):,.1f}" if both else ""))
        g_first, g_last = _grouped(first), _grouped(last)
        for name in sorted(set(g_first) | set(g_last), key=lambda g: -g_first.get(g, 0.0)):
            a, b = g_first.get(name, 0.0), g_last.get(name, 0.0)
            print(f"  {a:8.1f}" + (f" {b:8.1f} {b - a:+8.1f}" if both else "") + f"  {name}")
        rows = sorted(set(first) | set(last), key=lambda k: -abs(last.get(k, 0) - first.get(k, 0)) if both
                      else -first[k])
        for key in rows[:top]:
            a, b = first.get(key, 0.0), last.get(key, 0.0)
            print(f"    {a:8.2f}" + (f" {b:8.2f} {b - a:+8.2f}" if both else "") + f"  {key}")
        if lines:
            lined = seen[-1][phase + ".lines"]
            print(f"  the HTTP front's busiest lines ({trees[-1]}), bytecodes per call:")
            for key in sorted(lined, key=lambda k: -lined[k])[:lines]:
                print(f"    {lined[key]:8.2f}  {key}")


def plain_cpu(tree: Path, calls: int, warmup: int) -> dict[str, float]:
    """CPU us per call of each phase, the sidecar untraced."""
    work = Path(tempfile.mkdtemp(prefix="omb-http-cpu-"))
    port = free_port()
    argv = _argv([PYTHON, "-m", "sidecar"], _sidecar_config(TINY, work), port)
    found: dict[str, float] = {}
    with _server(argv, port, work / "stderr", 60.0, cwd=tree) as child, \
            HttpConnection(port, {"Authorization": f"Bearer {TOKEN}"}, 60.0) as conn:
        phases = _phases(_open_session(conn))
        _warm(conn, phases, warmup)
        for name, body, headers in phases:
            before = cpu_seconds(child.pid) or 0.0
            for i in range(calls):
                conn.request(body(warmup + i), headers)
            found[name] = ((cpu_seconds(child.pid) or 0.0) - before) / calls * 1e6
    return found


def compare_cpu(trees: list[Path], calls: int, warmup: int, rounds: int, block: int = BLOCK_CALLS) -> None:
    """Every tree's sidecar open at once, its session and stateless lanes driven in
    alternating blocks (`bench.blocks`), `rounds` times over; per phase, each tree's CPU per
    call and its CPU over the first tree's, block by block (median and quartiles)."""
    from contextlib import ExitStack

    s = Settings(seq_calls=calls, warmup_calls=warmup)
    for run in range(rounds):
        with ExitStack() as stack:
            lanes = Lanes(stack, Path(tempfile.mkdtemp(prefix="omb-http-cpu-")), s)
            for i, tree in enumerate(trees):
                lanes.add_sidecar(f"t{i}", tree, stdio=False)
            with pinned({pid for pids in lanes.pids.values() for pid in pids}):
                records = alternate(lanes.lanes, lanes.pids, max(4, calls // block), block, warmup)
        for i, tree in enumerate(trees):
            for phase in ("session", "stateless"):
                mine = records[f"t{i}.{phase}"]
                ratio = Spread.of(cpu_ratios(records, f"t{i}.{phase}", f"t0.{phase}"))
                print(f"run {run + 1} {tree} {phase}: CPU us/call {mine.cpu_per_call_us() or float('nan'):.1f}; "
                      f"against the first tree, block by block {ratio.median:.3f} [{ratio.q1:.3f}, {ratio.q3:.3f}]")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile_calls --http")
    parser.add_argument("--http", action="store_true", help="(the mode's own flag, accepted)")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--lines", type=int, default=0, help="with --opcodes: the HTTP front's N busiest lines")
    parser.add_argument("--tree", type=Path, action="append")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--opcodes", action="store_true", help="exact bytecodes per call, by who runs them")
    parser.add_argument("--plain", action="store_true", help="CPU per call of each tree, interleaved")
    args = parser.parse_args(argv)
    trees = [t.resolve() for t in args.tree or [REPO_ROOT]]
    if args.plain:
        compare_cpu(trees, args.calls, args.warmup, args.rounds)
    else:
        print_opcodes(trees, args.calls, args.warmup, args.top, args.lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
