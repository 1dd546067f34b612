"""Issue 24, list changes with the TypeScript SDK's client (npm `@modelcontextprotocol/client`,
pinned to 2026-07-28, tests/eras/ts_listen_client.mjs) in front: its
`subscriptions/listen` stream hears that the tools changed, from a session-era server
and from a 2026-07-28 one (the `mcp` SDK's servers, tests/eras/changing_server.py), and
its next `tools/list` shows the new tool."""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest

from tests.conftest import REPO, child_env
from tests.eras.changing_support import open_stateless_server, session_entry
from tests.eras.eras_support import wait_for_tools
from tests.http.http_support import open_http_sidecar

pytestmark = pytest.mark.e2e

CLIENT = Path(__file__).resolve().parent / "ts_listen_client.mjs"


@asynccontextmanager
async def _upstream(era: str) -> AsyncIterator[dict[str, Any]]:
    if era == "session":
        yield session_entry()
        return
    async with open_stateless_server() as url:
        yield {"type": "http", "url": url, "pinning": "off"}


@pytest.mark.parametrize("era", ["session", "2026-07-28"])
async def test_the_typescript_clients_listen_stream_hears_the_tools_change(npm, write_config, tmp_path: Path,
                                                                           era: str) -> None:
    async with _upstream(era) as entry, open_http_sidecar(write_config({"changing": entry}), tmp_path) as sc:
        async with aiohttp.ClientSession() as http:
            await wait_for_tools(http, sc.url, sc.token, "changing__echo")
        with anyio.fail_after(60):
            done = await anyio.run_process([npm.node, str(CLIENT), sc.url, sc.token, "changing__grow_tools"],
                                           check=False, env=child_env(), cwd=str(REPO), stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    said = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert said["honored"] == {"toolsListChanged": True}
    assert said["heard"] and set(said["heard"]) == {"notifications/tools/list_changed"}
    assert "changing__extra_1" in said["tools"]
