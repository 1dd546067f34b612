"""MCP Apps from a Streamable HTTP server (the `mcp` SDK's `Apps` server over HTTP; it
answers `server/discover` and `initialize` alike, and the sidecar's handshake settles on
the session era with it today), to a session-era engine (stdio front) and to a 2026-07-28
engine (stateless HTTP front): the `ui://` resource read, `_meta.ui` unchanged, the
app-only tool kept from the model and run for the app, the Apps extension offered."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest

from sidecar.catalog.apps import APP_MARKER
from tests.apps.session_peer import stateless
from tests.conftest import REPO, child_env, wait_until
from tests.http.http_support import _read_port, _stop, http_sidecar  # noqa: F401 - fixture

pytestmark = pytest.mark.timeout(120)

SERVER = Path(__file__).resolve().parent / "apps_server.py"
UI = "ui://clock/app.html"
DISCOVER = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}}


@asynccontextmanager
async def apps_over_http() -> AsyncIterator[str]:
    process = await anyio.open_process([sys.executable, str(SERVER), "--http"], stdout=subprocess.PIPE,
                                       stderr=subprocess.DEVNULL, env=child_env(), cwd=str(REPO),
                                       start_new_session=True)
    try:
        yield f"http://127.0.0.1:{await _read_port(process)}/mcp"
    finally:
        await _stop(process)


async def _speaks_2026(url: str) -> bool:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}
    async with aiohttp.ClientSession() as client, client.post(url, data=json.dumps(DISCOVER), headers=headers) as r:
        text = await r.text()
    return "2026-07-28" in text and '"supportedVersions"' in text


async def test_a_2026_apps_server_to_a_session_engine_and_a_stateless_engine(
        raw_sidecar: Any, http_sidecar: Any, write_config: Any) -> None:
    async with apps_over_http() as url:
        assert await _speaks_2026(url)
        config = write_config({"clock": {"type": "http", "url": url, "startTimeoutSeconds": 20}},
                              face={"listWaitSeconds": 30, "bareNames": False})
        async with raw_sidecar(config) as sc:
            offered = await sc.initialize()  # the server still starting counts as offering the extension
            extensions = offered["capabilities"]["extensions"]
            assert extensions["io.modelcontextprotocol/ui"] == {}
            # answered while the server starts (early or not), tasks are offered too, as for any starting server
            assert set(extensions) <= {"io.modelcontextprotocol/ui", "io.modelcontextprotocol/tasks"}
            tools = {t["name"]: t for t in await sc.wait_for_tools(["clock__show_clock"])}
            assert "clock__tick" not in tools and tools["clock__show_clock"]["_meta"]["ui"]["resourceUri"] == UI
            read = await sc.request("resources/read", {"uri": UI}, timeout=30)
            assert read["result"]["contents"][0]["mimeType"] == "text/html;profile=mcp-app"
            assert "error" in await sc.request("tools/call", {"name": "clock__tick", "arguments": {}}, timeout=30)
            ran = await sc.request("tools/call", {"name": "clock__tick", "arguments": {}, "_meta": {APP_MARKER: True}},
                                   timeout=30)
            assert ran["result"]["content"][0]["text"].startswith("tick meta="), ran
            assert APP_MARKER not in ran["result"]["content"][0]["text"]
        async with http_sidecar(config) as hc, aiohttp.ClientSession() as client:
            async def listed() -> set[str] | None:  # the stateless front lists what is ready now
                names = {t["name"] for t in (await stateless(hc, client, "tools/list", {}))["result"]["tools"]}
                return names if "clock__show_clock" in names else None

            assert "clock__tick" not in await wait_until(listed, timeout=30, every=0.1, what="clock's tools listed")
            read = await stateless(hc, client, "resources/read", {"uri": UI})
            assert read["result"]["contents"][0]["mimeType"] == "text/html;profile=mcp-app", read
            ran = await stateless(hc, client, "tools/call", {"name": "clock__tick", "arguments": {},
                                                             "_meta": {APP_MARKER: True}})
            assert ran["result"]["content"][0]["text"].startswith("tick meta="), ran
