"""`tools/call` over Streamable HTTP: what the sidecar's HTTP front adds, and its floor.

Owns the `http` case of a round. The baseline (`direct`) is the fast upstream itself
answering POSTs (`fast_upstream.py --http`, aiohttp like the sidecar's front), so the
client, the TCP round trip and the HTTP server stack are paid on both sides; the
sidecar (`--http`, its upstream the same fast upstream on stdio) is measured twice in
the same process: inside an `Mcp-Session-Id` session, and as stateless 2026-07-28
requests (the envelope in `params._meta`, the `Mcp-*` headers). Each phase is
sequential `tools/call`s of `echo` after a warm-up, p50/p90/p99 in microseconds; the
added latency (sidecar minus direct) is `report`'s job.

Refuses to judge, like `cases`. Standalone, it prints one run's figures and never
writes the docs; `--parts` runs the decomposition of `bench.http_parts`:

    python -m bench.http_calls [--rounds 3]
    python -m bench.http_calls --parts --rounds 11 [--tree /work/main --tree .]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.candidates import BENCH_DIR, PYTHON, REPO_ROOT, Candidate, upstream_argv
from bench.cases import Settings, percentile
from bench.catalogs import TINY, CatalogSpec
from bench.client import ConnectionFailed
from bench.http_client import HttpConnection, free_port, wait_port
from bench.probes import cpu_seconds

__all__ = ["HTTP_CANDIDATES", "measure_http"]

HTTP_CANDIDATES = ("direct", "sidecar")
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


def _direct(spec: CatalogSpec, s: Settings, workdir: Path, log: Path) -> Figures:
    port = free_port()
    argv = [PYTHON, str(BENCH_DIR / "fast_upstream.py"), *spec.argv(), "--http", str(port)]
    with _server(argv, port, log, s.timeout_s) as child, HttpConnection(port, timeout=s.timeout_s) as conn:
        conn.request(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": _HANDSHAKE}).encode())
        return _timed_phase(child.pid, conn, _echo_body("echo"), {}, s, "http_call")


def _sidecar(spec: CatalogSpec, s: Settings, workdir: Path, log: Path) -> Figures:
    port = free_port()
    argv = [PYTHON, "-m", "sidecar", "--config", str(_sidecar_config(spec, workdir)),
            "--http", f"127.0.0.1:{port}", "--token-env", "OMB_BENCH_HTTP_TOKEN"]
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with _server(argv, port, log, s.timeout_s) as child, HttpConnection(port, auth, s.timeout_s) as conn:
        session = _open_session(conn)
        figures = _timed_phase(child.pid, conn, _echo_body("fast__echo"), session, s, "http_session")
        stateless = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "fast__echo"}
        figures |= _timed_phase(child.pid, conn, _echo_body("fast__echo", _ENVELOPE), stateless, s, "http_stateless")
        return figures


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


def _phase(conn: HttpConnection, body: Body, headers: dict[str, str], s: Settings) -> list[float]:
    return _sequential(conn, body, headers, s.seq_calls, s.warmup_calls, s.phase_cap_s, s.min_calls)


def _timed_phase(pid: int, conn: HttpConnection, body: Body, headers: dict[str, str], s: Settings,
                 prefix: str) -> Figures:
    """A phase's percentiles and the server process's own CPU per call in it (robust where
    wall time is not: on a loaded machine the round trip waits for a core, the CPU does not)."""
    before = cpu_seconds(pid)
    times = _phase(conn, body, headers, s)
    after = cpu_seconds(pid)
    figures = _percentiles(times, prefix)
    if before is not None and after is not None and times:
        figures[f"{prefix}_cpu_us"] = (after - before) / (len(times) + s.warmup_calls) * 1e6
    return figures


def measure_http(candidate: Candidate, s: Settings, workdir: Path, log: Path) -> Figures:
    """Sequential echo calls over HTTP: the fast upstream itself, or the sidecar in front of it."""
    spec = TINY
    if candidate.name == "direct":
        return _direct(spec, s, workdir, log)
    if candidate.name == "sidecar":
        return _sidecar(spec, s, workdir, log)
    raise ValueError(f"{candidate.name} is not measured over HTTP")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.http_calls")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=Settings.seq_calls)
    parser.add_argument("--parts", action="store_true", help="the decomposition: HTTP and stdio, sidecar and direct")
    parser.add_argument("--tree", type=Path, action="append", help="a checkout whose sidecar runs (--parts)")
    args = parser.parse_args(argv)
    s = Settings(seq_calls=args.calls, phase_cap_s=1e9)
    if args.parts:
        from bench.http_parts import measure_parts, print_parts

        print_parts(measure_parts(s, args.rounds, [t.resolve() for t in args.tree or [REPO_ROOT]]))
        return 0
    work = Path(tempfile.mkdtemp(prefix="omb-http-"))
    seen: list[Figures] = []
    for _ in range(args.rounds):
        direct = _direct(TINY, s, work, work / "direct.log")
        seen.append({f"direct_{k}": v for k, v in direct.items()} | _sidecar(TINY, s, work, work / "sidecar.log"))
    for key in seen[0]:
        print(f"{key:32} {statistics.median(r[key] for r in seen):10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
