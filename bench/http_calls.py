"""`tools/call` over Streamable HTTP: what the sidecar's HTTP front adds, beside stdio's.

Owns the `http` case of a round and its standalone runs. The baseline over HTTP is the
fast upstream itself answering POSTs (`fast_upstream.py --http`, aiohttp like the
sidecar's front), so the client, the TCP round trip and the HTTP server stack are paid
on both sides; the baseline over stdio is the same upstream on a pipe. The sidecar (its
upstream the same fast upstream on stdio) runs twice: on stdio, and with `--http`,
driven inside an `Mcp-Session-Id` session and as stateless 2026-07-28 requests (the
envelope in `params._meta`, the `Mcp-*` headers) on one kept-alive connection.

All five lanes are open at once and measured in alternating blocks of sequential
`tools/call`s of `echo` (`bench.blocks`; this client on one core, the servers on the other): each added p50 is the median over blocks of
the sidecar's block median minus its baseline's in the same block, and the HTTP ones
are set over the stdio one of the same run, so a loaded minute lands on numerator and
denominator alike. Each lane also records its server process's own CPU per call.

Refuses to judge, like `cases`. Standalone, it prints each run's figures and never
writes the docs; `--parts` runs the decomposition of `bench.http_parts`:

    python -m bench.http_calls [--runs 3] [--calls 3000] [--block 25] [--sets 3]
    python -m bench.http_calls --parts --runs 5 [--tree /work/main --tree .]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from bench.blocks import Lane, LaneRecord, Spread, alternate, paired, pinned
from bench.candidates import BENCH_DIR, PYTHON, REPO_ROOT, Candidate, upstream_argv
from bench.cases import Settings, percentile
from bench.catalogs import TINY, CatalogSpec
from bench.client import Connection, ConnectionFailed, echo_request
from bench.http_client import HttpConnection, free_port, wait_port
from bench.probes import load_average

__all__ = ["HTTP_CANDIDATES", "measure_blocked", "measure_http"]

HTTP_CANDIDATES = ("sidecar",)  # the baselines run inside the sidecar's measurement, in the same blocks
TOKEN = "bench-http-token-0123456789abcdef"
MODERN = "2026-07-28"
_ENVELOPE: dict[str, object] = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
_HANDSHAKE = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "omb-bench", "version": "1"}}

Figures = dict[str, float]
Body = Callable[[int], bytes]


def _percentiles(times: list[float], prefix: str) -> Figures:
    figures = {f"{prefix}_p{q}_us": percentile(times, q) * 1e6 for q in (50, 90, 99)}
    figures[f"{prefix}_calls"] = float(len(times))
    return figures


def _echo_body(tool: str, meta: dict[str, object] | None = None) -> Body:
    def body(i: int) -> bytes:
        params: dict[str, object] = {"name": tool, "arguments": {"text": f"ping {i}"}}
        if meta is not None:
            params["_meta"] = meta
        return json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}).encode()
    return body


def _sequential(conn: HttpConnection, body: Body, headers: dict[str, str], count: int,
                warmup: int, cap_s: float, minimum: int) -> list[float]:
    for i in range(warmup):
        conn.request(body(i), headers)
    times: list[float] = []
    clock = time.perf_counter
    stop = clock() + cap_s
    for i in range(count):
        payload = body(warmup + i)
        start = clock()
        conn.request(payload, headers)
        end = clock()
        times.append(end - start)
        if end > stop and i + 1 >= minimum:
            break
    return times


@contextmanager
def _server(argv: list[str], port: int, log: Path, timeout: float,
            cwd: Path = REPO_ROOT) -> Iterator[subprocess.Popen[bytes]]:
    env = {**os.environ, "OMB_BENCH_HTTP_TOKEN": TOKEN}
    with open(log, "ab") as stderr:
        child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
                                 env=env, cwd=str(cwd), start_new_session=True)
    try:
        wait_port(port, timeout, lambda: child.poll() is None)
        yield child
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(child.pid, sig)
                child.wait(5.0)
                break
            except (ProcessLookupError, subprocess.TimeoutExpired):
                continue


def _sidecar_config(spec: CatalogSpec, workdir: Path) -> Path:
    argv = upstream_argv(spec)
    config = {"mcpServers": {"fast": {"command": argv[0], "args": argv[1:]}}, "health": {"schedule": False}}
    path = workdir / "config-http.json"
    path.write_text(json.dumps(config))
    return path


def _open_session(conn: HttpConnection) -> dict[str, str]:
    """initialize, initialized, and a tools/list holding the echo tool; the session's headers."""
    init = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": _HANDSHAKE}).encode()
    _, headers, _ = conn.post(init)
    ident = headers.get("mcp-session-id")
    if not ident:
        raise ConnectionFailed("initialize answered without an Mcp-Session-Id")
    session = {"Mcp-Session-Id": ident, "MCP-Protocol-Version": "2025-06-18"}
    conn.post(b'{"jsonrpc":"2.0","method":"notifications/initialized"}', session)
    listed = conn.request(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}', session)
    if b'"fast__echo"' not in bytes(listed):
        raise ConnectionFailed("tools/list does not hold fast__echo")
    return session



STATELESS_HEADERS = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "fast__echo"}
BLOCK_CALLS = 25  # calls per lane per block: short blocks, many of them
MODES = ("stdio", "session", "stateless")  # the sidecar's lanes, per tree


class Lanes:
    """Every server of one blocked run, open at once: the fast upstream on stdio and serving
    HTTP itself, and per tree the sidecar on stdio and over HTTP (in a session, stateless).
    A lane's name is `direct_stdio`, `direct_http`, or `<label>.<mode>`."""

    def __init__(self, stack: ExitStack, work: Path, s: Settings) -> None:
        self.stack, self.work, self.s = stack, work, s
        self.lanes: dict[str, Lane] = {}
        self.pids: dict[str, tuple[int, ...]] = {}
        self.config = _sidecar_config(TINY, work)

    def _stdio(self, name: str, argv: list[str], cwd: Path, tool: str) -> None:
        conn = self.stack.enter_context(Connection(argv, cwd=str(cwd), stderr_path=self.work / f"{name}.log"))
        conn.initialize(self.s.timeout_s)
        conn.list_tools_until(TINY.tools, self.s.timeout_s)
        build, timeout = echo_request(tool), self.s.timeout_s
        self.lanes[name] = lambda n: conn.sequential(build, n, timeout=timeout)
        self.pids[name] = (conn.pid,)

    def _http(self, name: str, conn: HttpConnection, pid: int, body: Body, headers: dict[str, str]) -> None:
        self.lanes[name] = lambda n: _sequential(conn, body, headers, n, 0, 1e9, 1)
        self.pids[name] = (pid,)

    def add_direct(self) -> None:
        self._stdio("direct_stdio", upstream_argv(TINY), REPO_ROOT, "echo")
        port = free_port()
        argv = [PYTHON, str(BENCH_DIR / "fast_upstream.py"), *TINY.argv(), "--http", str(port)]
        child = self.stack.enter_context(_server(argv, port, self.work / "direct_http.log", self.s.timeout_s))
        conn = self.stack.enter_context(HttpConnection(port, timeout=self.s.timeout_s))
        conn.request(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": _HANDSHAKE}).encode())
        self._http("direct_http", conn, child.pid, _echo_body("echo"), {})

    def add_sidecar(self, label: str, tree: Path, stdio: bool = True) -> None:
        """The sidecar of `tree` (its own checkout as the working directory) both ways, or
        over HTTP alone."""
        if stdio:
            self._stdio(f"{label}.stdio", [PYTHON, "-m", "sidecar", "--config", str(self.config)], tree, "fast__echo")
        port = free_port()
        argv = [PYTHON, "-m", "sidecar", "--config", str(self.config),
                "--http", f"127.0.0.1:{port}", "--token-env", "OMB_BENCH_HTTP_TOKEN"]
        child = self.stack.enter_context(_server(argv, port, self.work / f"{label}.http.log", self.s.timeout_s, tree))
        conn = self.stack.enter_context(HttpConnection(port, {"Authorization": f"Bearer {TOKEN}"}, self.s.timeout_s))
        session = _open_session(conn)
        self._http(f"{label}.session", conn, child.pid, _echo_body("fast__echo"), session)
        self._http(f"{label}.stateless", conn, child.pid, _echo_body("fast__echo", _ENVELOPE), STATELESS_HEADERS)


def _lane_figures(record: LaneRecord, prefix: str) -> Figures:
    figures = _percentiles(record.times, prefix)
    if (cpu := record.cpu_per_call_us()) is not None:
        figures[f"{prefix}_cpu_us"] = cpu
    return figures


def _spread(values: list[float], key: str) -> Figures:
    spread = Spread.of(values)
    return {key: spread.median, key.replace("_p50_", "_q1_"): spread.q1, key.replace("_p50_", "_q3_"): spread.q3}


def blocked_figures(records: dict[str, LaneRecord], label: str) -> Figures:
    """One tree's figures from one blocked run: each lane's percentiles and CPU per call,
    each added p50 as the median over blocks of the paired difference with its baseline
    over the same transport (with its quartiles), and the HTTP ones over stdio's."""
    figures = _lane_figures(records["direct_http"], "http_call") | _lane_figures(records["direct_stdio"], "http_direct_stdio")
    for mode in MODES:
        figures |= _lane_figures(records[f"{label}.{mode}"], f"http_{mode}")
        base = "direct_stdio" if mode == "stdio" else "direct_http"
        figures |= _spread(paired(records, f"{label}.{mode}", base), f"http_{mode}_added_p50_us")
    stdio_added, stdio_cpu = figures["http_stdio_added_p50_us"], figures.get("http_stdio_cpu_us")
    for mode in MODES[1:]:
        if stdio_added > 0:
            figures[f"http_{mode}_added_vs_stdio"] = figures[f"http_{mode}_added_p50_us"] / stdio_added
        if stdio_cpu and f"http_{mode}_cpu_us" in figures:
            figures[f"http_{mode}_cpu_vs_stdio"] = figures[f"http_{mode}_cpu_us"] / stdio_cpu
    return figures


def measure_blocked(s: Settings, trees: list[Path], block: int = BLOCK_CALLS, sets: int = 1) -> dict[Path, Figures]:
    """One blocked run: `sets` times over, every lane opened anew and all at once, then
    driven in blocks of `block` calls after `s.warmup_calls` each; `s.seq_calls` calls per
    lane in all, shared among the sets, whose blocks are pooled (two processes of the same
    code can differ by several percent: fresh ones per set average that out). Per tree,
    `blocked_figures`."""
    labels = {tree: f"t{i}" for i, tree in enumerate(trees)}
    pooled: dict[str, LaneRecord] = {}
    for _ in range(sets):
        with ExitStack() as stack:
            lanes = Lanes(stack, Path(tempfile.mkdtemp(prefix="omb-http-")), s)
            lanes.add_direct()
            for tree, label in labels.items():
                lanes.add_sidecar(label, tree)
            blocks = max(4, s.seq_calls // (block * sets))
            with pinned({pid for pids in lanes.pids.values() for pid in pids}):
                records = alternate(lanes.lanes, lanes.pids, blocks, block, s.warmup_calls)
        for name, record in records.items():
            pooled[name] = pooled[name].joined(record) if name in pooled else record
    return {tree: blocked_figures(pooled, label) for tree, label in labels.items()}


def measure_http(candidate: Candidate, s: Settings, workdir: Path, log: Path) -> Figures:
    """The sidecar over HTTP and stdio beside the fast upstream served both ways, in
    alternating blocks (`measure_blocked`): the `http` case of a round."""
    if candidate.name != "sidecar":
        raise ValueError(f"{candidate.name} is not measured over HTTP")
    return measure_blocked(s, [REPO_ROOT])[REPO_ROOT]


SHOWN = ("http_stdio_added_p50_us", "http_session_added_p50_us", "http_stateless_added_p50_us",
         "http_session_added_vs_stdio", "http_stateless_added_vs_stdio", "http_direct_stdio_p50_us",
         "http_stdio_p50_us", "http_call_p50_us", "http_session_p50_us", "http_stateless_p50_us",
         "http_direct_stdio_cpu_us", "http_stdio_cpu_us", "http_call_cpu_us", "http_session_cpu_us",
         "http_stateless_cpu_us")


def _one_minute_load() -> float:
    return (load_average() or [float("nan")])[0]


def print_runs(runs: list[Figures]) -> None:
    """Each run's figures in a column, the added ones with their block quartiles; the load
    average before and after each run heads its column (a loaded machine spreads them)."""
    print(f"{'':32}" + "".join(f"{'run ' + str(i + 1):>22}" for i in range(len(runs))))
    print(f"{'load average (1 min) before/after':32}"
          + "".join(f"{run.get('load_before', float('nan')):.2f}/{run.get('load_after', float('nan')):.2f}".rjust(22)
                    for run in runs))
    for key in SHOWN:
        cells = []
        for run in runs:
            value = run.get(key, float("nan"))
            q1, q3 = run.get(key.replace("_p50_", "_q1_")), run.get(key.replace("_p50_", "_q3_"))
            spread = f" [{q1:6.1f},{q3:6.1f}]" if "added_p50" in key and q1 is not None and q3 is not None else ""
            cells.append(f"{value:8.2f}{spread}".rjust(22))
        print(f"{key:32}" + "".join(cells))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.http_calls")
    parser.add_argument("--runs", type=int, default=3, help="consecutive blocked runs, each shown")
    parser.add_argument("--calls", type=int, default=Settings.seq_calls, help="calls per lane per run")
    parser.add_argument("--block", type=int, default=BLOCK_CALLS, help="calls per lane per block")
    parser.add_argument("--sets", type=int, default=3, help="fresh sets of processes per run, their blocks pooled")
    parser.add_argument("--parts", action="store_true", help="the decomposition: HTTP and stdio, sidecar and direct")
    parser.add_argument("--tree", type=Path, action="append", help="a checkout whose sidecar runs (--parts)")
    args = parser.parse_args(argv)
    s = Settings(seq_calls=args.calls, phase_cap_s=1e9)
    if args.parts:
        from bench.http_parts import measure_parts, print_parts

        print_parts(measure_parts(s, args.runs, [t.resolve() for t in args.tree or [REPO_ROOT]], args.block, args.sets))
        return 0
    print(f"{args.runs} runs, each {args.calls} calls per lane in blocks of {args.block}, over {args.sets} "
          "fresh sets of processes; added: median over blocks [quartiles], us")
    runs = []
    for _ in range(args.runs):
        before = _one_minute_load()
        figures = measure_blocked(s, [REPO_ROOT], args.block, args.sets)[REPO_ROOT]
        runs.append(figures | {"load_before": before, "load_after": _one_minute_load()})
    print_runs(runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
