"""Helpers for the Cloud-mode tests: an MCP client over HTTP (a 2025 session, or
2026-07-28 stateless requests), config files, and the real Redis and HAProxy processes.

* `Client(base, token)`: `await c.initialize()`, `await c.call(name, args)` in a session;
  `await stateless_call(base, token, name, args)` without one.
* `write_config(tmp_path, servers, **sections)` -> path of a sidecar config.
* `open_redis(tmp_path)`: `async with` -> (port, process) of `redis-server` on 127.0.0.1.
* `open_haproxy(tmp_path, ports)`: `async with` -> the port of HAProxy, round robin over
  `ports` (or, with `balance="hdr(Authorization)"`, hashing on the bearer).
Every wait is bounded; every process started here is stopped at the end.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import anyio.abc
import pytest

from tests.conftest import UPSTREAMS, child_env
from tests.http.http_support import _stop, free_port

FAULT_SERVER = UPSTREAMS / "fault_server.py"
MODERN = "2026-07-28"
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "cloud", "version": "1"}}}


def fault_entry(*options: str, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(FAULT_SERVER), *options], **extra}


def write_config(tmp_path: Path, servers: dict[str, Any], name: str = "sidecar.json", **sections: Any) -> Path:
    document = {"bot": {"id": "cloud-bot", "engine": "claude"}, "face": {"listWaitSeconds": 10},
                **sections, "mcpServers": servers}
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


def headers(token: str, **extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream", **extra}


def parse_answer(body: bytes) -> dict[str, Any]:
    """A JSON answer, or the last `data:` of an event stream."""
    text = body.decode()
    if text.lstrip().startswith("{"):
        answer: dict[str, Any] = json.loads(text)
        return answer
    frames = [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]
    return next(f for f in reversed(frames) if "id" in f)


class Client:
    """A 2025-11-25 session over Streamable HTTP."""

    def __init__(self, base: str, token: str, http: aiohttp.ClientSession) -> None:
        self.url, self.token, self.http = f"{base}/mcp", token, http
        self.session_id: str | None = None
        self.next_id = 1

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.next_id += 1
        extra = {"Mcp-Session-Id": self.session_id} if self.session_id else {}
        async with self.http.post(self.url, json=body, headers=headers(self.token, **extra)) as response:
            assert response.status == 200, (response.status, await response.text())
            return parse_answer(await response.read())

    async def initialize(self) -> None:
        async with self.http.post(self.url, json=INIT, headers=headers(self.token)) as response:
            assert response.status == 200, await response.text()
            self.session_id = response.headers["Mcp-Session-Id"]
        await self.http.post(self.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                             headers=headers(self.token, **{"Mcp-Session-Id": self.session_id}))

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return await self.request("tools/call", {"name": name, "arguments": arguments})

    async def tools(self) -> list[str]:
        answer = await self.request("tools/list", {})
        return [t["name"] for t in answer["result"]["tools"]]


async def stateless_call(http: aiohttp.ClientSession, base: str, token: str, name: str,
                         arguments: dict[str, Any], ident: int = 1) -> dict[str, Any]:
    """One 2026-07-28 `tools/call`: the envelope in the body, the headers mirroring it."""
    body = {"jsonrpc": "2.0", "id": ident, "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": ENVELOPE}}
    sent = headers(token, **{"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": name})
    async with http.post(f"{base}/mcp", json=body, headers=sent) as response:
        assert response.status == 200, (response.status, await response.text())
        return parse_answer(await response.read())


def text_of(answer: dict[str, Any]) -> str:
    return "".join(part.get("text", "") for part in answer["result"]["content"])


def handle_in(answer: dict[str, Any]) -> str:
    import re

    found = re.search(r"h_[A-Za-z0-9_-]{16,}", json.dumps(answer["result"]))
    assert found, answer
    return found.group(0)


async def wait_port(port: int, timeout: float = 20.0) -> None:
    with anyio.fail_after(timeout):
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    return
            except OSError:
                await anyio.sleep(0.05)


def need(binary: str) -> str:
    found = shutil.which(binary) or shutil.which(binary, path="/usr/sbin:/usr/bin")
    if found is None:
        pytest.skip(f"{binary} is not installed (./dev test installs it)")
    return found


@asynccontextmanager
async def open_redis(tmp_path: Path, port: int | None = None,
                     password: str = "") -> AsyncIterator[tuple[int, anyio.abc.Process]]:
    port = port or free_port()
    argv = [need("redis-server"), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--dir", str(tmp_path), "--protected-mode", "yes"]
    if password:
        argv += ["--requirepass", password]
    process = await anyio.open_process(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                       env=child_env(), start_new_session=True)
    try:
        await wait_port(port)
        yield port, process
    finally:
        await _stop(process)


HAPROXY_CONFIG = """\
global
    maxconn 512
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
frontend mcp
    bind 127.0.0.1:{port}
    default_backend sidecars
backend sidecars
    balance {balance}
{servers}
"""


@asynccontextmanager
async def open_haproxy(tmp_path: Path, ports: list[int], balance: str = "roundrobin") -> AsyncIterator[int]:
    port = free_port()
    servers = "\n".join(f"    server s{i} 127.0.0.1:{p}" for i, p in enumerate(ports))
    config = tmp_path / f"haproxy-{port}.cfg"
    config.write_text(HAPROXY_CONFIG.format(port=port, balance=balance, servers=servers))
    process = await anyio.open_process([need("haproxy"), "-db", "-f", str(config)], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, env=child_env(), start_new_session=True)
    try:
        await wait_port(port)
        yield port
    finally:
        await _stop(process)
