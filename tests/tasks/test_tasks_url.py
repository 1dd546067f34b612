"""Tasks routed to a Streamable HTTP upstream: npm `server-everything` in `streamableHttp`
mode on 127.0.0.1 (a session-era server over HTTP), reached by a session engine over
stdio. The task is made, polled, listed, its result read and another one cancelled, all
under the sidecar's ids."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import REPO, child_env
from tests.http.http_support import free_port
from tests.tasks.task_story import EV, RESEARCH, check_tasks

pytestmark = pytest.mark.timeout(120)

PRELOAD = Path(__file__).resolve().parents[1] / "http" / "loopback_only.cjs"  # binds its listener to loopback


@asynccontextmanager
async def everything_over_http(npm: Any) -> AsyncIterator[str]:
    port = free_port()
    argv = [npm.node, "-r", str(PRELOAD), str(npm.everything_js), "streamableHttp"]
    process = await anyio.open_process(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                       env=child_env({"PORT": str(port)}), cwd=str(REPO), start_new_session=True)
    try:
        seen = b""
        assert process.stderr is not None
        with anyio.fail_after(30):
            async for chunk in process.stderr:
                seen += chunk
                if str(port).encode() in seen:
                    break
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        with anyio.CancelScope(shield=True):
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            await process.wait()


async def test_tasks_of_a_streamable_http_upstream(npm: Any, raw_sidecar: Any, write_config: Any) -> None:
    async with everything_over_http(npm) as url:
        config = write_config({EV: {"type": "http", "url": url, "startTimeoutSeconds": 20}},
                              face={"listWaitSeconds": 30, "bareNames": False})
        async with raw_sidecar(config) as sc:
            await sc.initialize()
            await sc.wait_for_tools([RESEARCH])

            async def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
                answer: dict[str, Any] = await sc.request(method, params, timeout=30)
                return answer

            await check_tasks(request)
