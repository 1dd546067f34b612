"""Cloud mode, measured: `python -m bench.cloud [--quick] [--out FILE]`.

Owns three figures, each from real processes on 127.0.0.1 (the sidecar's HTTP front
with the bench's fast upstream behind it, Debian's redis-server and haproxy):

* `throughput`: stateless 2026-07-28 `tools/call` per second through HAProxy (round
  robin) with 1 replica and with 2, at a fixed number of calls in flight;
* `held`: the latency of a call whose result is shaped and held, and of a
  `query_result` on it, with held results in the process vs in Redis (`store.url`);
* `tracing`: sequential stateless call latency with OpenTelemetry off and on
  (exporting over OTLP/HTTP to a local sink that answers at once).

Prints a table and writes the figures as JSON (default `bench/results/cloud.json`).
Runs alone; nothing in `python -m bench` depends on it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
TOKEN = "bench-token-0123456789abcdef"
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
HAPROXY = """global
    maxconn 1024
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
frontend mcp
    bind 127.0.0.1:{port}
    default_backend sidecars
backend sidecars
    balance roundrobin
{servers}
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def env_of(extra: dict[str, str] | None = None) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    return {**keep, "PYTHONUNBUFFERED": "1", "OMB_BENCH_TOKEN": TOKEN, **(extra or {})}


async def wait_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        except OSError:
            await asyncio.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")


@asynccontextmanager
async def process(argv: list[str], port: int, env: dict[str, str] | None = None) -> AsyncIterator[int]:
    child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env=env or env_of(), cwd=str(REPO), start_new_session=True)
    try:
        await wait_port(port)
        yield port
    finally:
        os.killpg(child.pid, signal.SIGTERM)
        try:  # waited off the loop: the OTLP sink on this loop must still answer a child's last export
            await asyncio.to_thread(child.wait, 10)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()


def sidecar(folder: Path, name: str, store: str | None = None, env: dict[str, str] | None = None) -> Any:
    config: dict[str, Any] = {"bot": {"id": "bench", "engine": "claude"}, "face": {"listWaitSeconds": 10},
                              "health": {"schedule": False},
                              "mcpServers": {"fast": {"command": sys.executable,
                                                      "args": [str(BENCH / "fast_upstream.py"), "--tools", "4"]}}}
    if store:
        config["store"] = {"url": store}
    path = folder / f"{name}.json"
    path.write_text(json.dumps(config))
    port = free_port()
    argv = [sys.executable, "-m", "sidecar", "--config", str(path), "--http", f"127.0.0.1:{port}",
            "--token-env", "OMB_BENCH_TOKEN"]
    return process(argv, port, env_of(env))


async def call(http: aiohttp.ClientSession, port: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": ENVELOPE}}
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
               "Mcp-Method": "tools/call", "Mcp-Name": name}
    async with http.post(f"http://127.0.0.1:{port}/mcp", json=body, headers=headers) as response:
        answer: dict[str, Any] = json.loads(await response.read())
    if "result" not in answer:
        raise RuntimeError(f"{name}: {answer}")
    return answer


async def timed(http: aiohttp.ClientSession, port: int, name: str, arguments: dict[str, Any]) -> float:
    started = time.perf_counter()
    await call(http, port, name, arguments)
    return time.perf_counter() - started


async def calls_per_second(port: int, calls: int, in_flight: int) -> float:
    connector = aiohttp.TCPConnector(limit=in_flight)
    async with aiohttp.ClientSession(connector=connector) as http:
        await asyncio.gather(*(call(http, port, "fast__echo", {"n": i}) for i in range(in_flight)))  # warm
        queue = iter(range(calls))

        async def worker() -> None:
            for i in queue:
                await call(http, port, "fast__echo", {"n": i})

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(in_flight)))
        return calls / (time.perf_counter() - started)


@asynccontextmanager
async def haproxy(folder: Path, ports: list[int]) -> AsyncIterator[int]:
    port = free_port()
    servers = "\n".join(f"    server s{i} 127.0.0.1:{p}" for i, p in enumerate(ports))
    config = folder / f"haproxy-{port}.cfg"
    config.write_text(HAPROXY.format(port=port, servers=servers))
    async with process([need("haproxy"), "-db", "-f", str(config)], port) as bound:
        yield bound


def need(binary: str) -> str:
    found = shutil.which(binary) or shutil.which(binary, path="/usr/sbin:/usr/bin")
    if found is None:
        raise SystemExit(f"bench.cloud needs {binary} (./dev test installs it)")
    return found


async def throughput(folder: Path, ports: list[int], calls: int, in_flight: int, rounds: int) -> dict[str, float]:
    async with haproxy(folder, ports[:1]) as one, haproxy(folder, ports) as two:
        figures: dict[str, list[float]] = {"1 replica": [], "2 replicas": []}
        for _ in range(rounds):  # interleaved, so a busy moment costs both alike
            figures["1 replica"].append(await calls_per_second(one, calls, in_flight))
            figures["2 replicas"].append(await calls_per_second(two, calls, in_flight))
    return {k: round(statistics.median(v), 1) for k, v in figures.items()}


async def held_latency(local: int, shared: int, repeats: int, size: int) -> dict[str, float]:
    figures: dict[str, float] = {}
    async with aiohttp.ClientSession() as http:
        for label, port in (("in process", local), ("redis", shared)):
            await call(http, port, "fast__blob", {"bytes": size, "prepare": True})
            shaped, queried = [], []
            for _ in range(repeats):
                started = time.perf_counter()
                answer = await call(http, port, "fast__blob", {"bytes": size})
                shaped.append(time.perf_counter() - started)
                handle = _handle(answer)
                queried.append(await timed(http, port, "query_result", {"handle": handle, "query": "length(@)"}))
            figures[f"shaped+held, {label} (ms p50)"] = round(statistics.median(shaped) * 1000, 2)
            figures[f"query_result, {label} (ms p50)"] = round(statistics.median(queried) * 1000, 2)
    return figures


def _handle(answer: dict[str, Any]) -> str:
    import re

    found = re.search(r"h_[A-Za-z0-9_-]{16,}", json.dumps(answer))
    if found is None:
        raise RuntimeError("the result was not held")
    return found.group(0)


@asynccontextmanager
async def otlp_sink() -> AsyncIterator[str]:
    async def accept(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(body=b"", content_type="application/x-protobuf")

    app = web.Application()
    app.router.add_post("/v1/{signal}", accept)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def tracing_cost(off: int, on: int, repeats: int) -> dict[str, float]:
    figures: dict[str, float] = {}
    async with aiohttp.ClientSession() as http:
        samples: dict[str, list[float]] = {"off": [], "on": []}
        for i in range(repeats):
            samples["off"].append(await timed(http, off, "fast__echo", {"n": i}))
            samples["on"].append(await timed(http, on, "fast__echo", {"n": i}))
    for label, values in samples.items():
        figures[f"stateless call, tracing {label} (us p50)"] = round(statistics.median(values) * 1e6, 1)
    figures["added by tracing (us p50)"] = round(
        figures["stateless call, tracing on (us p50)"] - figures["stateless call, tracing off (us p50)"], 1)
    return figures


async def span_cost(endpoint: str, repeats: int) -> dict[str, float]:
    """CPU per request of a server span with its histogram, in memory (no sockets, so the
    machine's scheduling does not blur it): a handler that answers at once, bare and traced,
    on the request's own thread (batching and export run on the SDK's thread)."""
    from types import SimpleNamespace

    from sidecar.gate.observers.tracing import Tracing

    # the exporter reads its endpoint from the environment once, when it is made: set it for
    # that moment only, so no later child of this process inherits a dead endpoint
    before = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
    try:
        tracing = Tracing("tcp")
    finally:
        if before is None:
            del os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"]
        else:
            os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = before
    face = SimpleNamespace(catalog=SimpleNamespace(tool=lambda name: object()), listing=SimpleNamespace(meta={}))
    d = SimpleNamespace(face=face, session=SimpleNamespace(protocol_version="2025-11-25"), redact=str)
    req = SimpleNamespace(method="tools/call", id=7, params={"name": "notes__search", "arguments": {}})

    async def answer(d: Any, req: Any, params: Any) -> bytes:
        return b"{}"

    traced = tracing.wrap(answer)
    figures = {}
    for label, handler in (("bare", answer), ("traced", traced)):
        started = time.thread_time()  # this thread only: the export runs on the SDK's own thread
        for i in range(repeats):
            await handler(d, req, None)
            if i % 64 == 0:
                await asyncio.sleep(0)  # let the sink answer the exporter
        figures[f"handler, {label} (us CPU per request)"] = round((time.thread_time() - started) / repeats * 1e6, 1)
    await asyncio.to_thread(tracing.shutdown)  # its last export goes to the sink on this loop
    return figures


async def run(quick: bool) -> dict[str, Any]:
    """One fleet for every section, started side by side: two plain replicas, one on Redis,
    one exporting traces."""
    with tempfile.TemporaryDirectory(prefix="omb-bench-cloud-") as folder:
        where = Path(folder)
        redis_port = free_port()
        argv = [need("redis-server"), "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--dir", folder]
        async with otlp_sink() as endpoint, process(argv, redis_port), AsyncExitStack() as stack:
            fleet = [sidecar(where, "replica0"), sidecar(where, "replica1"),
                     sidecar(where, "shared", f"redis://127.0.0.1:{redis_port}/0"),
                     sidecar(where, "traced", env={"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint})]
            plain, other, shared, traced = await asyncio.gather(*(stack.enter_async_context(s) for s in fleet))
            return {
                "throughput (calls/s, 32 in flight)": await throughput(
                    where, [plain, other], 400 if quick else 4000, 32, 1 if quick else 3),
                "held result, 256 KB JSON": await held_latency(plain, shared, 5 if quick else 40, 256 * 1024),
                "tracing": {**await tracing_cost(plain, traced, 50 if quick else 1000),
                            **await span_cost(endpoint, 200 if quick else 20000)},
            }


DOC_ROWS = (
    ("stateless `tools/call`/s through HAProxy, 32 in flight, 1 replica", "throughput (calls/s, 32 in flight)", ("1 replica",), 1.0, ""),
    ("same, 2 replicas", "throughput (calls/s, 32 in flight)", ("2 replicas",), 1.0, ""),
    ("shaped and held 256 KB JSON result, held in process (p50)", "held result, 256 KB JSON",
     ("shaped+held, in process (ms p50)",), 1.0, " ms"),
    ("same, held in Redis (p50)", "held result, 256 KB JSON", ("shaped+held, redis (ms p50)",), 1.0, " ms"),
    ("`query_result` on it, in process / in Redis (p50)", "held result, 256 KB JSON",
     ("query_result, in process (ms p50)", "query_result, redis (ms p50)"), 1.0, " ms"),
    ("sequential stateless call, tracing off / on (p50)", "tracing",
     ("stateless call, tracing off (us p50)", "stateless call, tracing on (us p50)"), 1e-3, " ms"),
    ("a request's own CPU in the tracing SDK, in memory (traced minus bare)", "tracing",
     ("handler, traced (us CPU per request)", "handler, bare (us CPU per request)"), 1.0, " us"),
)


def _doc_cell(run: dict[str, Any], section: str, keys: tuple[str, ...], scale: float, unit: str) -> str:
    values = [run.get(section, {}).get(key) for key in keys]
    if any(v is None for v in values):
        return "-"
    if keys[0].startswith("handler, traced"):  # the SDK's share: traced minus bare
        values = [values[0] - values[1]]
    return " / ".join(f"{v * scale:,.1f}".removesuffix(".0") for v in values) + unit


def render_docs(figures: dict[str, Any]) -> dict[str, str]:
    """The figures table of docs/cloud.md: one column per run kept in the JSON."""
    from bench import doc_files

    runs = figures["runs"]
    header = ["figure", *(f"run {i + 1}" for i in range(len(runs)))] if len(runs) > 1 else ["figure", "measured"]
    rows = [[label, *(_doc_cell(run, section, keys, scale, unit) for run in runs)]
            for label, section, keys, scale, unit in DOC_ROWS]
    return {"cloud.md": doc_files.page("bench.cloud", doc_files.table(header, rows), figures["measured"])}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.cloud", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small counts, one round")
    parser.add_argument("--out", type=Path, default=BENCH / "results" / "cloud.json")
    parser.add_argument("--docs", type=Path, metavar="DIR", help="also write the docs' table into DIR")
    args = parser.parse_args(argv)
    figures = asyncio.run(run(args.quick))
    if args.docs is not None:
        from bench import doc_files

        command = "python -m bench.cloud" + "".join(f" {a}" for a in (sys.argv[1:] if argv is None else argv))
        doc_files.write("cloud", "bench.cloud", {"measured": doc_files.stamp(command), "runs": [figures]}, args.docs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2) + "\n")
    for section, values in figures.items():
        print(f"{section}:")
        for name, value in values.items():
            print(f"  {name:45} {value:>12,}")


if __name__ == "__main__":
    main()
