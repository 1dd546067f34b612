"""A real MCP client (the Inspector CLI) pointed at the sidecar's HTTP front, with the
token, lists and calls tools of three upstreams: a stdio child, a Streamable HTTP server
and a legacy SSE server (server-everything serves both HTTP modes, kept on loopback by a
preload that binds its listener to 127.0.0.1).
"""

from __future__ import annotations

import json
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
from http_support import free_port, http_sidecar  # noqa: F401 - fixture

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

PRELOAD = Path(__file__).resolve().parent / "loopback_only.cjs"


@asynccontextmanager
async def everything(npm: Any, mode: str) -> AsyncIterator[str]:
    """server-everything in `streamableHttp` or `sse` mode on 127.0.0.1; yields its URL."""
    port = free_port()
    argv = [npm.node, "-r", str(PRELOAD), str(npm.everything_js), mode]
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
        yield f"http://127.0.0.1:{port}/{'mcp' if mode == 'streamableHttp' else 'sse'}"
    finally:
        with anyio.CancelScope(shield=True):
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            await process.wait()


async def inspect(npm: Any, url: str, token: str, method: str, *extra: str) -> Any:
    argv = [npm.node, str(npm.inspector_js), "--cli", url, "--transport", "http",
            "--header", f"Authorization: Bearer {token}", *extra, "--method", method]
    with anyio.fail_after(90):
        done = await anyio.run_process(argv, check=False, cwd=str(npm.inspector_js.parent), env=child_env(),
                                       stdin=subprocess.DEVNULL)
    out = done.stdout.decode(errors="replace")
    try:
        return json.loads(out)
    except ValueError:
        raise AssertionError(f"Inspector printed no JSON (exit {done.returncode}): {out[-1500:]}\n"
                             f"{done.stderr.decode(errors='replace')[-1500:]}") from None


async def test_inspector_lists_and_calls_stdio_http_and_sse_upstreams(npm, http_sidecar, tmp_path: Path):
    async with everything(npm, "streamableHttp") as web, everything(npm, "sse") as old:
        config = {
            "bot": {"id": "inspector", "engine": "claude"},
            "face": {"name": "omb", "listWaitSeconds": 25, "startTimeoutSeconds": 20},
            "mcpServers": {
                "kid": npm.everything_entry(),
                "web": {"type": "http", "url": web},
                "old": {"type": "sse", "url": old},
            },
        }
        path = tmp_path / "sidecar.json"
        path.write_text(json.dumps(config))
        async with http_sidecar(path) as sidecar:
            listed = await inspect(npm, sidecar.url, sidecar.token, "tools/list")
            names = {tool["name"] for tool in listed["tools"]}
            for alias in ("kid", "web", "old"):
                assert f"{alias}__echo" in names, (sorted(names), sidecar.stderr[-3000:])
                called = await inspect(npm, sidecar.url, sidecar.token, "tools/call",
                                       "--tool-name", f"{alias}__echo", "--tool-arg", f"message=hello-{alias}")
                assert f"hello-{alias}" in json.dumps(called), called
