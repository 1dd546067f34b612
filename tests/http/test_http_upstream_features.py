"""Everything a stateful Streamable HTTP upstream does reaches the engine through the
sidecar: progress and sampling on a call's answer stream, list changes on the GET
stream, and cancellation back to the upstream. The upstream is tests/upstreams'
scripted SDK server, served over HTTP by tests/http/sdk_http_server.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from tests.conftest import REPO, await_event, child_env
from http_support import _read_port, _stop

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120),
              pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]

SERVER = Path(__file__).resolve().parent / "sdk_http_server.py"


@asynccontextmanager
async def sdk_over_http(events: Path) -> AsyncIterator[str]:
    argv = [sys.executable, str(SERVER), "--name", "web-sdk", "--events", str(events)]
    process = await anyio.open_process(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=child_env(),
                                       cwd=str(REPO), start_new_session=True)
    try:
        yield f"http://127.0.0.1:{await _read_port(process)}/mcp"
    finally:
        await _stop(process)


def texts(result: Any) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def test_progress_sampling_list_changes_and_cancellation_over_http(sidecar_client, write_config, tmp_path):
    events = tmp_path / "events.jsonl"

    async def sampling(ctx: Any, params: Any) -> types.CreateMessageResult:
        return types.CreateMessageResult(role="assistant", model="m1",
                                         content=types.TextContent(type="text", text="over http"))

    async with sdk_over_http(events) as url:
        config = write_config({"web": {"type": "http", "url": url, "pinning": "warn"}}, face={"listWaitSeconds": 20})
        async with sidecar_client(config, sampling=sampling) as c:
            await c.wait_for_tools({"web__echo", "web__slow", "web__sample", "web__set_tools"})
            progress: list[float] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                progress.append(value)

            with anyio.fail_after(30):
                done = await c.session.call_tool("web__slow", {"seconds": 0.4}, progress_callback=on_progress)
                assert texts(done).startswith("slept") and progress == sorted(progress) and progress
                sampled = await c.session.call_tool("web__sample", {"prompt": "hi"})
                assert texts(sampled) == "sampled[m1]: over http"

            before = c.tools_changed
            await c.session.call_tool("web__set_tools", {"names": ["late_one"]})
            await c.wait_for_tools({"web__late_one"})
            assert c.tools_changed > before

            token = uuid.uuid4().hex
            with anyio.move_on_after(1.0):
                await c.session.call_tool("web__slow", {"seconds": 60, "nonce": token})
            await await_event(events, lambda e: e["event"] == "cancelled" and e.get("nonce") == token,
                              what="the HTTP upstream seeing the cancellation")
            echoed = await c.session.call_tool("web__echo", {"nonce": "after"})
            assert json.loads(json.dumps(echoed.structured_content))["nonce"] == "after"
