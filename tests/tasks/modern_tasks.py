"""Shared pieces of the 2026 tasks-extension tests: the 2026 tasks server
(tests/tasks/tasks_server_2026.py) as a process, and one stateless 2026-07-28 request that
declares (or not) the tasks extension."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import anyio

from tests.apps.session_peer import stateless
from tests.conftest import REPO, child_env
from tests.http.http_support import HttpSidecar, _read_port, _stop

SERVER = Path(__file__).resolve().parent / "tasks_server_2026.py"
TASKS = "io.modelcontextprotocol/tasks"
DECLARED = {"io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}}
T26 = "t26"  # the 2026 tasks server's alias


@asynccontextmanager
async def open_tasks_server(events: Path) -> AsyncIterator[str]:
    """The 2026 tasks server as a process: yields its endpoint URL."""
    argv = [sys.executable, str(SERVER), "--events", str(events)]
    process = await anyio.open_process(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=child_env(),
                                       cwd=str(REPO), start_new_session=True)
    try:
        yield f"http://127.0.0.1:{await _read_port(process)}/mcp"
    finally:
        await _stop(process)


def modern_requester(sc: HttpSidecar, client: aiohttp.ClientSession,
                     declare: bool = True) -> Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]:
    """`request(method, params)` -> the answer frame, each request a stateless 2026-07-28 one
    whose client capabilities declare the tasks extension (unless `declare` is false)."""
    async def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
        with_meta = {**params, "_meta": {**params.get("_meta", {}), **(DECLARED if declare else {})}}
        answer: dict[str, Any] = await stateless(sc, client, method, with_meta)
        return answer

    return request


async def settled(request: Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]], task_id: str,
                  until: frozenset[str] = frozenset({"completed", "failed", "cancelled"})) -> dict[str, Any]:
    """`tasks/get` until the task's status is one of `until`, bounded."""
    with anyio.fail_after(30):
        while True:
            got: dict[str, Any] = (await request("tasks/get", {"taskId": task_id}))["result"]
            if got["status"] in until:
                return got
            await anyio.sleep(0.05)
