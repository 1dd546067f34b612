"""MCP Apps from a 2026-07-28-only server (the `mcp` SDK's `Apps` server over HTTP with
`initialize` refused, so the sidecar speaks to it statelessly) to a session-era engine
(stdio front) and to a 2026-07-28 engine (stateless HTTP front): the `ui://` resource
listed and read, `_meta.ui` unchanged, the app-only tool left out of the listing, refused
to the model and run for the app (issue 24's matrix, "app resource" cells with a 2026
server)."""

from __future__ import annotations

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
HTML = "text/html;profile=mcp-app"


@asynccontextmanager
async def modern_apps_server() -> AsyncIterator[str]:
    process = await anyio.open_process([sys.executable, str(SERVER), "--http", "--modern"], stdout=subprocess.PIPE,
                                       stderr=subprocess.DEVNULL, env=child_env(), cwd=str(REPO),
                                       start_new_session=True)
    try:
        yield f"http://127.0.0.1:{await _read_port(process)}/mcp"
    finally:
        await _stop(process)


def _config(write_config: Any, url: str) -> Path:
    path: Path = write_config({"clock": {"type": "http", "url": url, "startTimeoutSeconds": 20, "pinning": "off"}},
                              face={"listWaitSeconds": 30, "bareNames": False})
    return path


async def test_a_session_engine_gets_a_2026_servers_app(raw_sidecar: Any, write_config: Any) -> None:
    async with modern_apps_server() as url, raw_sidecar(_config(write_config, url)) as sc:
        offered = await sc.initialize()
        assert offered["capabilities"]["extensions"]["io.modelcontextprotocol/ui"] == {}
        tools = {t["name"]: t for t in await sc.wait_for_tools(["clock__show_clock"])}
        assert "clock__tick" not in tools and tools["clock__show_clock"]["_meta"]["ui"]["resourceUri"] == UI
        listed = (await sc.request("resources/list", {}, timeout=30))["result"]["resources"]
        assert UI in {r["uri"] for r in listed}
        read = await sc.request("resources/read", {"uri": UI}, timeout=30)
        assert read["result"]["contents"][0]["mimeType"] == HTML, read
        assert "error" in await sc.request("tools/call", {"name": "clock__tick", "arguments": {}}, timeout=30)
        ran = await sc.request("tools/call", {"name": "clock__tick", "arguments": {}, "_meta": {APP_MARKER: True}},
                               timeout=30)
        assert ran["result"]["content"][0]["text"].startswith("tick meta="), ran
        assert APP_MARKER not in ran["result"]["content"][0]["text"]


async def test_a_stateless_engine_gets_a_2026_servers_app(http_sidecar: Any, write_config: Any) -> None:
    async with modern_apps_server() as url, http_sidecar(_config(write_config, url)) as hc, \
            aiohttp.ClientSession() as client:
        async def listed() -> dict[str, Any] | None:
            tools = {t["name"]: t for t in (await stateless(hc, client, "tools/list", {}))["result"]["tools"]}
            return tools if "clock__show_clock" in tools else None

        tools = await wait_until(listed, timeout=30, every=0.1, what="clock's tools listed")
        assert "clock__tick" not in tools and tools["clock__show_clock"]["_meta"]["ui"]["resourceUri"] == UI
        resources = (await stateless(hc, client, "resources/list", {}))["result"]["resources"]
        assert UI in {r["uri"] for r in resources}
        read = await stateless(hc, client, "resources/read", {"uri": UI})
        assert read["result"]["contents"][0]["mimeType"] == HTML, read
        refused = await stateless(hc, client, "tools/call", {"name": "clock__tick", "arguments": {}})
        assert "error" in refused or refused["result"].get("isError"), refused
        ran = await stateless(hc, client, "tools/call", {"name": "clock__tick", "arguments": {},
                                                         "_meta": {APP_MARKER: True}})
        assert ran["result"]["content"][0]["text"].startswith("tick meta="), ran
