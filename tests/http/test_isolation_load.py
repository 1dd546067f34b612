"""RELIABILITY R3 over the HTTP front: 50 sessions x 20 calls in flight over 5 upstreams,
one upstream killed mid-call. Nothing crosses, everything else succeeds, the affected
calls fail within 2 s, and the killed upstream serves again within 5 s."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest

from http_support import HttpSidecar, http_sidecar  # noqa: F401 - fixture

pytestmark = [pytest.mark.timeout(180), pytest.mark.e2e]

SESSIONS = 50
CALLS = 20
UPSTREAMS = ["u0", "u1", "u2", "u3", "victim"]
FAULT = Path(__file__).resolve().parents[1] / "upstreams" / "fault_server.py"


def _answer(content_type: str, body: bytes, ident: int) -> dict[str, Any]:
    if content_type.startswith("application/json"):
        return json.loads(body)  # type: ignore[no-any-return]
    for line in body.decode().splitlines():
        if line.startswith("data:"):
            frame = json.loads(line[5:])
            if frame.get("id") == ident:
                return frame  # type: ignore[no-any-return]
    raise AssertionError(f"no answer to {ident} in {body[:300]!r}")


class Engine:
    def __init__(self, client: aiohttp.ClientSession, sc: HttpSidecar) -> None:
        self.client, self.sc, self.session, self.next_id = client, sc, "", 0

    async def rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        ident = self.next_id
        headers = self.sc.headers(**({"Mcp-Session-Id": self.session} if self.session else {}))
        body = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
        async with self.client.post(self.sc.url, json=body, headers=headers) as response:
            assert response.status == 200, await response.text()
            self.session = self.session or response.headers["Mcp-Session-Id"]
            return _answer(response.headers.get("Content-Type", ""), await response.read(), ident)

    async def start(self) -> None:
        await self.rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                      "clientInfo": {"name": "load", "version": "1"}})


def _sleeps_received(record: Path) -> int:
    if not record.exists():
        return 0
    return sum(1 for line in record.read_text().splitlines() if '"recv"' in line and "sleep" in line)


def _text(frame: dict[str, Any]) -> str:
    return "".join(c.get("text", "") for c in frame["result"]["content"])


async def test_one_upstream_killed_under_load_touches_no_other_call(http_sidecar, tmp_path: Path) -> None:
    record = tmp_path / "victim.jsonl"
    servers = {alias: {"command": sys.executable, "args": [str(FAULT), f"name={alias}"]} for alias in UPSTREAMS}
    servers["victim"]["args"].append(f"record={record}")
    config = tmp_path / "sidecar.json"
    config.write_text(json.dumps({"mcpServers": servers, "face": {"listWaitSeconds": 20}}))
    async with http_sidecar(config, log_level="WARNING") as sc:
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=60)) as client:
            engines = [Engine(client, sc) for _ in range(SESSIONS)]
            async with anyio.create_task_group() as group:
                for engine in engines:
                    group.start_soon(engine.start)
            victim = int(_text(await engines[0].rpc("tools/call", {"name": "victim__pid", "arguments": {}})))
            outcomes: list[tuple[str, str, dict[str, Any], float]] = []
            killed_at: list[float] = []

            async def call(engine: Engine, n: int) -> None:
                alias = UPSTREAMS[n % len(UPSTREAMS)]
                nonce = f"{engine.session[:8]}-{n}"
                seconds = 1.0 if alias != "victim" else 30.0
                frame = await engine.rpc("tools/call", {"name": f"{alias}__sleep", "arguments": {"seconds": seconds, "nonce": nonce}})
                outcomes.append((alias, nonce, frame, time.monotonic()))

            async def kill_soon() -> None:
                """Kill once every call meant for the victim is in flight there."""
                with anyio.fail_after(60):
                    while _sleeps_received(record) < SESSIONS * CALLS // len(UPSTREAMS):
                        await anyio.sleep(0.05)
                killed_at.append(time.monotonic())
                os.kill(victim, signal.SIGKILL)

            async with anyio.create_task_group() as group:
                for engine in engines:
                    for n in range(CALLS):
                        group.start_soon(call, engine, n)
                group.start_soon(kill_soon)
            assert len(outcomes) == SESSIONS * CALLS
            for alias, nonce, frame, ended in outcomes:
                if alias == "victim":
                    assert frame["result"]["isError"] is True and "upstream 'victim' stopped" in _text(frame)
                    assert ended - killed_at[0] < 2.0
                else:
                    assert _text(frame) == f"slept 1 {nonce}" or _text(frame).endswith(f" {nonce}"), frame
            with anyio.fail_after(5):
                while True:
                    frame = await engines[1].rpc("tools/call", {"name": "victim__echo", "arguments": {"nonce": "back"}})
                    if not frame["result"].get("isError"):
                        break
                    await anyio.sleep(0.05)
            assert time.monotonic() - killed_at[0] < 5.0
