"""The health schedule in the long-lived HTTP front, with a real upstream that fails, then
recovers, then fails again: it joins and leaves the face with list_changed, and the
other upstream serves throughout."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest

from tests.cloud.cloud_support import FAULT_SERVER, Client, fault_entry, headers, write_config
from tests.http.http_support import TOKEN, open_http_sidecar

pytestmark = pytest.mark.timeout(120)

GATED = """\
import os, sys
if not os.path.exists({flag!r}):
    sys.exit(3)
os.execv(sys.executable, [sys.executable, {server!r}, *sys.argv[1:]])
"""


async def collect_stream(http: aiohttp.ClientSession, client: Client, seen: list[dict[str, Any]]) -> None:
    sent = headers(TOKEN, **{"Mcp-Session-Id": client.session_id or ""})
    async with http.get(client.url, headers=sent, timeout=aiohttp.ClientTimeout(total=None)) as response:
        assert response.status == 200
        async for line in response.content:
            if line.startswith(b"data:"):
                seen.append(json.loads(line[5:]))


def read_health(tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "data" / "mcp-health.json"
    found: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    return found


async def wait_tools(client: Client, wanted: bool, name: str = "gated__echo") -> list[str]:
    with anyio.fail_after(30):
        while True:
            tools = await client.tools()
            if (name in tools) == wanted:
                return tools
            await anyio.sleep(0.1)


async def test_a_server_that_recovers_joins_and_one_that_fails_leaves(tmp_path: Path) -> None:
    flag = tmp_path / "gated.ok"
    script = tmp_path / "gated.py"
    script.write_text(GATED.format(flag=str(flag), server=str(FAULT_SERVER)))
    servers = {"steady": fault_entry(), "gated": {"command": sys.executable, "args": [str(script)]}}
    config = write_config(tmp_path, servers, health={"retryFailedSeconds": 0.5, "recheckStartedSeconds": 0.5},
                          data={"folder": str(tmp_path / "data")}, face={"listWaitSeconds": 5})
    async with open_http_sidecar(config, tmp_path) as sc, aiohttp.ClientSession() as http:
        client = Client(sc.base, TOKEN, http)
        await client.initialize()
        seen: list[dict[str, Any]] = []
        async with anyio.create_task_group() as group:
            group.start_soon(collect_stream, http, client, seen)
            tools = await wait_tools(client, False)
            assert "steady__echo" in tools
            with anyio.fail_after(30):  # its failure (the circuit opened) is written down for the next process too
                while read_health(tmp_path).get("gated", {}).get("ok") is not False:
                    await anyio.sleep(0.05)

            flag.write_text("now it starts")
            await wait_tools(client, True)
            changes = sum(1 for f in seen if f.get("method") == "notifications/tools/list_changed")
            assert changes >= 1
            answer = await client.call("gated__echo", {"nonce": "back"})
            assert answer["result"]["structuredContent"]["nonce"] == "back"

            flag.unlink()
            await client.call("gated__crash", {})  # it stops and cannot start again
            tools = await wait_tools(client, False)
            assert "steady__echo" in tools
            assert sum(1 for f in seen if f.get("method") == "notifications/tools/list_changed") > changes
            answer = await client.call("steady__echo", {"nonce": "still"})
            assert answer["result"]["structuredContent"]["nonce"] == "still"
            with anyio.fail_after(20):  # the crash takes its tools away at once; the failed restart is recorded
                while read_health(tmp_path)["gated"]["ok"] is not False:
                    await anyio.sleep(0.05)
            assert read_health(tmp_path)["steady"]["ok"] is True

            flag.write_text("and again")
            await wait_tools(client, True)  # tried again on the retry round
            group.cancel_scope.cancel()
    assert "leaves the face" in sc.stderr and "joins the face again" in sc.stderr
