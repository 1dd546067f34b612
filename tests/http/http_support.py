"""Helpers and fixtures for the HTTP tests (import the fixtures into a test module): the sidecar's HTTP front as a real process, URL
upstreams (the conformance fixture, server-everything), and a bearer-adding forwarder.

* `http_sidecar(config, env=None, extra=())`: `async with` -> `HttpSidecar` (base URL,
  token, process, stderr) for `omb-sidecar --http 127.0.0.1:<free port> --token-env`.
* `fixture_upstream(transport="http")`: `async with` -> URL of tests/http/conformance_server.py.
* `served_front(face, settings)`: `async with` -> (the `HttpFront`, its aiohttp
  `TestServer` on 127.0.0.1) for an in-memory sidecar's face, closed whole at the end.
* `bearer_forwarder(target, token)`: `async with` -> URL of a forwarder that adds the
  bearer token and passes everything else (Host and Origin included) through unchanged,
  for clients that cannot send headers (the conformance suite).
Every wait is bounded; every process started here is stopped at the end.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import anyio.abc
import pytest
from aiohttp import web

from aiohttp.test_utils import TestServer

from sidecar.front.http.listener import FrontSettings
from sidecar.front.http.routes import HttpFront
from sidecar.hub.face import Face
from sidecar.redact import Redactor
from tests.conftest import REPO, child_env

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "conformance_server.py"
TOKEN = "test-token-0123456789abcdef"
START_WAIT = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _read_port(process: anyio.abc.Process, timeout: float = START_WAIT) -> int:
    assert process.stdout is not None
    buffered = b""
    with anyio.fail_after(timeout):
        async for chunk in process.stdout:
            buffered += chunk
            for line in buffered.decode(errors="replace").splitlines():
                if line.startswith("PORT "):
                    return int(line.split()[1])
    raise AssertionError(f"no PORT line from the fixture: {buffered!r}")


async def _stop(process: anyio.abc.Process, sig: int = signal.SIGTERM, grace: float = 5.0) -> None:
    with anyio.CancelScope(shield=True):
        if process.returncode is None:
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                pass
            with anyio.move_on_after(grace):
                await process.wait()
        if process.returncode is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            await process.wait()


@asynccontextmanager
async def open_fixture(transport: str = "http", *options: str) -> AsyncIterator[str]:
    argv = [sys.executable, str(FIXTURE), "--transport", transport, *options]
    process = await anyio.open_process(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                       env=child_env(), cwd=str(REPO), start_new_session=True)
    try:
        port = await _read_port(process)
        yield f"http://127.0.0.1:{port}/{'sse' if transport == 'sse' else 'mcp'}"
    finally:
        await _stop(process)


@dataclass
class HttpSidecar:
    base: str
    token: str
    process: anyio.abc.Process
    stderr_path: Path
    port: int

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace") if self.stderr_path.exists() else ""

    def headers(self, **extra: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream", **extra}


async def wait_healthy(base: str, process: anyio.abc.Process, stderr: Callable[[], str]) -> None:
    async with aiohttp.ClientSession() as client:
        with anyio.fail_after(START_WAIT):
            while True:
                if process.returncode is not None:
                    raise AssertionError(f"the sidecar exited ({process.returncode}): {stderr()[-2000:]}")
                try:
                    async with client.get(f"{base}/health") as response:
                        if response.status == 200:
                            return
                except aiohttp.ClientError:
                    pass
                await anyio.sleep(0.05)


@asynccontextmanager
async def open_http_sidecar(config: Path, tmp_path: Path, *, env: dict[str, str] | None = None,
                            extra: tuple[str, ...] = (), token: str = TOKEN,
                            log_level: str = "DEBUG", more_tokens: tuple[str, ...] = ()) -> AsyncIterator[HttpSidecar]:
    """`more_tokens`: further accepted tokens (each its own caller), given in a token file."""
    port = free_port()
    stderr_path = tmp_path / f"sidecar-http-{port}.log"
    given = ["--token-env", "OMB_TEST_TOKEN"]
    if more_tokens:
        token_file = tmp_path / f"tokens-{port}"
        token_file.write_text("\n".join((token, *more_tokens)) + "\n")
        token_file.chmod(0o600)
        given = ["--token-file", str(token_file)]
    argv = [sys.executable, "-m", "sidecar", "--config", str(config), "--http", f"127.0.0.1:{port}",
            *given, "--log-level", log_level, *extra]
    with open(stderr_path, "wb") as errlog:
        process = await anyio.open_process(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errlog,
                                           env=child_env({"OMB_TEST_TOKEN": token, **(env or {})}),
                                           cwd=str(REPO), start_new_session=True)
    sidecar = HttpSidecar(f"http://127.0.0.1:{port}", token, process, stderr_path, port)
    try:
        await wait_healthy(sidecar.base, process, lambda: sidecar.stderr)
        yield sidecar
    finally:
        await _stop(process, grace=15.0)


_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "content-length",
        "proxy-authorization", "proxy-authenticate"}


@dataclass
class Forwarder:
    target: str
    token: str
    seen: list[str] = field(default_factory=list)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.seen.append(f"{request.method} {request.headers.get('Host')}")
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        headers["Authorization"] = f"Bearer {self.token}"
        body = await request.read()
        timeout = aiohttp.ClientTimeout(total=None)
        async with aiohttp.ClientSession(timeout=timeout, auto_decompress=False) as client:
            async with client.request(request.method, self.target + request.path_qs, data=body or None,
                                      headers=headers, allow_redirects=False) as upstream:
                reply = web.StreamResponse(status=upstream.status, headers={
                    k: v for k, v in upstream.headers.items() if k.lower() not in _HOP})
                await reply.prepare(request)
                try:
                    async for chunk in upstream.content.iter_any():
                        await reply.write(chunk)
                    await reply.write_eof()
                except (ConnectionResetError, aiohttp.ClientError):
                    pass  # the client went away first
                return reply


@asynccontextmanager
async def open_forwarder(target_base: str, token: str) -> AsyncIterator[str]:
    forwarder = Forwarder(target_base, token)
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", forwarder.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


@pytest.fixture
def fixture_upstream() -> Callable[..., Any]:
    return open_fixture


@pytest.fixture
def http_sidecar(tmp_path: Path) -> Callable[..., Any]:
    def start(config: Path, **kw: Any) -> Any:
        return open_http_sidecar(config, tmp_path, **kw)

    return start


@pytest.fixture
def bearer_forwarder() -> Callable[..., Any]:
    return open_forwarder


@asynccontextmanager
async def served_front(face: Face, settings: FrontSettings) -> AsyncIterator[tuple[HttpFront, TestServer]]:
    """`face` behind a real HTTP front on 127.0.0.1; its held calls, sessions and site closed at the end."""
    front = HttpFront(face, Redactor([]), settings)
    site = TestServer(front.app(), host="127.0.0.1", port=0)
    await site.start_server()
    try:
        yield front, site
    finally:
        front.held.stop_all("the test is over")
        await front.held.aclose()
        await front.table.close_all()
        await site.close()
