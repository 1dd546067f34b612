"""What the HTTP added latency is made of: the sidecar over HTTP and over stdio, beside the
fast upstream served each way, measured in one run (issue 23's decomposition).

Owns `python -m bench.http_calls --parts`: interleaved rounds of four servers, each
driven with sequential `tools/call`s of the fast upstream's `echo`: the upstream on
stdio (`direct stdio`), the upstream serving HTTP with aiohttp (`direct http`), the
sidecar on stdio in front of it, and the sidecar's HTTP front in front of it (in a
session and stateless). For each: p50, the server's own CPU per call and, behind the
sidecar, the upstream's CPU per call. Prints the medians and the decomposition:

- added p50 = the sidecar's p50 minus the direct p50 over the same transport;
- `http front beyond stdio` = the sidecar's CPU per call over HTTP minus over stdio
  (the core is the same, so this is the HTTP front, aiohttp's and ours, against the
  stdio front), and the same difference for the bare upstream (what aiohttp costs a
  bare app against reading stdin); what is left is what the sidecar's HTTP front costs
  beyond a bare aiohttp app, the part that is ours to cut.

Prints; never writes the docs (`--docs` is the full bench's).
"""

from __future__ import annotations

import json
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench.candidates import BENCH_DIR, PYTHON, REPO_ROOT, upstream_argv
from bench.cases import Settings, percentile
from bench.catalogs import TINY
from bench.client import Connection, echo_request
from bench.http_calls import _HANDSHAKE, MODERN, TOKEN, _echo_body, _open_session, _sequential, _server, _sidecar_config
from bench.http_client import HttpConnection, free_port
from bench.probes import cpu_seconds

__all__ = ["measure_parts", "print_parts"]

Figures = dict[str, float]
_ENVELOPE: dict[str, object] = {"io.modelcontextprotocol/protocolVersion": MODERN,
                                "io.modelcontextprotocol/clientCapabilities": {}}
_STATELESS = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "fast__echo"}


def _child_of(pid: int) -> int | None:
    """The sidecar's upstream: its one child process."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return None
    return int(children[0]) if children else None


class _Meter:
    """CPU seconds of a few processes, from here to `per_call`."""

    def __init__(self, pids: dict[str, int | None]) -> None:
        self.pids = pids
        self.before = {name: cpu_seconds(pid) if pid else None for name, pid in pids.items()}

    def per_call(self, calls: int, prefix: str) -> Figures:
        found: Figures = {}
        for name, pid in self.pids.items():
            before, after = self.before[name], cpu_seconds(pid) if pid else None
            if before is not None and after is not None and calls:
                found[f"{prefix}_{name}_cpu_us"] = (after - before) / calls * 1e6
        return found


def _timed(prefix: str, pids: dict[str, int | None], run: Callable[[], list[float]]) -> Figures:
    meter = _Meter(pids)
    times = run()
    return {f"{prefix}_p50_us": percentile(times, 50) * 1e6, **meter.per_call(len(times), prefix)}


def _timed_http(prefix: str, pids: dict[str, int | None], conn: HttpConnection, body: Callable[[int], bytes],
                headers: dict[str, str], s: Settings) -> Figures:
    _sequential(conn, body, headers, s.warmup_calls, 0, 1e9, 1)  # warm, outside the measure
    return _timed(prefix, pids, lambda: _sequential(conn, body, headers, s.seq_calls, 0, 1e9, 1))


def _stdio(argv: list[str], cwd: Path, tool: str, s: Settings, prefix: str, behind: bool) -> Figures:
    with Connection(argv, cwd=str(cwd)) as conn:
        conn.initialize(s.timeout_s)
        conn.list_tools_until(TINY.tools, s.timeout_s)
        build = echo_request(tool)
        conn.sequential(build, s.warmup_calls, timeout=s.timeout_s)
        pids = {"server": conn.pid, "upstream": _child_of(conn.pid) if behind else None}
        return _timed(prefix, pids, lambda: conn.sequential(build, s.seq_calls, timeout=s.timeout_s))


def _http_direct(s: Settings, work: Path) -> Figures:
    port = free_port()
    argv = [PYTHON, str(BENCH_DIR / "fast_upstream.py"), *TINY.argv(), "--http", str(port)]
    with _server(argv, port, work / "direct.log", s.timeout_s) as child, HttpConnection(port, timeout=s.timeout_s) as conn:
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": _HANDSHAKE}
        conn.request(json.dumps(init).encode())
        return _timed_http("direct_http", {"server": child.pid}, conn, _echo_body("echo"), {}, s)


def _http_sidecar(tree: Path, s: Settings, work: Path) -> Figures:
    port = free_port()
    argv = [PYTHON, "-m", "sidecar", "--config", str(_sidecar_config(TINY, work)),
            "--http", f"127.0.0.1:{port}", "--token-env", "OMB_BENCH_HTTP_TOKEN"]
    with _server(argv, port, work / "sidecar.log", s.timeout_s, cwd=tree) as child, \
            HttpConnection(port, {"Authorization": f"Bearer {TOKEN}"}, s.timeout_s) as conn:
        session = _open_session(conn)
        pids = {"server": child.pid, "upstream": _child_of(child.pid)}
        figures = _timed_http("sidecar_session", pids, conn, _echo_body("fast__echo"), session, s)
        return figures | _timed_http("sidecar_stateless", pids, conn, _echo_body("fast__echo", _ENVELOPE),
                                     _STATELESS, s)


def measure_parts(s: Settings, rounds: int, trees: list[Path]) -> dict[Path, list[Figures]]:
    """`rounds` rounds; in each, the two direct servers once and each tree's sidecar in turn,
    so every tree's figures of a round are set beside the same direct ones."""
    seen: dict[Path, list[Figures]] = {tree: [] for tree in trees}
    for _ in range(rounds):
        work = Path(tempfile.mkdtemp(prefix="omb-http-parts-"))
        config = _sidecar_config(TINY, work)
        direct = _stdio(upstream_argv(TINY), REPO_ROOT, "echo", s, "direct_stdio", False) | _http_direct(s, work)
        for tree in trees:
            figures = _stdio([PYTHON, "-m", "sidecar", "--config", str(config)], tree, "fast__echo", s,
                             "sidecar_stdio", True)
            seen[tree].append(direct | figures | _http_sidecar(tree, s, work))
    return seen


def _derived(r: Figures) -> Figures:
    """One round's decomposition (see the module's words)."""
    stdio_added = r["sidecar_stdio_p50_us"] - r["direct_stdio_p50_us"]
    found = {"stdio_added_p50_us": stdio_added,
             "bare_aiohttp_cpu_us": r["direct_http_server_cpu_us"] - r["direct_stdio_server_cpu_us"]}
    for phase in ("session", "stateless"):
        added = r[f"sidecar_{phase}_p50_us"] - r["direct_http_p50_us"]
        front = r[f"sidecar_{phase}_server_cpu_us"] - r["sidecar_stdio_server_cpu_us"]
        found |= {f"{phase}_added_p50_us": added, f"{phase}_added_ratio": added / stdio_added,
                  f"{phase}_front_cpu_us": front, f"{phase}_beyond_bare_cpu_us": front - found["bare_aiohttp_cpu_us"]}
    return found


def print_parts(seen: dict[Path, list[Figures]]) -> None:
    """Per tree, medians over the rounds, with the least value any round read (the one the
    machine's other work disturbed least); the decomposition is taken round by round."""
    tables = {tree: [r | _derived(r) for r in rounds] for tree, rounds in seen.items()}
    trees = list(tables)
    print(f"{len(tables[trees[0]])} rounds: median (least), per tree: " + ", ".join(str(t) for t in trees))
    for key in tables[trees[0]][0]:
        cells = []
        for tree in trees:
            values = sorted(r[key] for r in tables[tree])
            cells.append(f"{statistics.median(values):8.2f} ({values[0]:8.2f})")
        print(f"  {key:34} " + "  ".join(cells))
