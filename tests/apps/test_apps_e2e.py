"""MCP Apps through the real fronts, against the `mcp` SDK's own `Apps` server
(tests/apps/apps_server.py): the `ui://` resource listed and read, `_meta.ui` unchanged,
the app-only tool out of the listing and refused to the model with the unknown-tool
answer, run for a request that carries the app marker (taken off before the server sees
it), and the engine's trace context passed on. Over stdio and over the HTTP session front."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from sidecar.catalog.apps import APP_MARKER
from tests.apps.session_peer import SessionPeer
from tests.http.http_support import http_sidecar  # noqa: F401 - fixture

pytestmark = pytest.mark.timeout(120)

SERVER = Path(__file__).resolve().parent / "apps_server.py"
UI = "ui://clock/app.html"
TRACE = {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "tracestate": "omb=1"}


@pytest.fixture
def apps_config(write_config: Any, sdk_server_entry: Any) -> Path:
    path: Path = write_config({"clock": {"command": sys.executable, "args": [str(SERVER)]},
                               "sdk": sdk_server_entry("sdk")}, face={"listWaitSeconds": 30})
    return path


def _text(answer: dict[str, Any]) -> str:
    return str(answer["result"]["content"][0]["text"])


async def _check_apps(request: Any) -> None:
    """The whole story, on any front: `request(method, params)` -> the answer frame."""
    tools = (await request("tools/list", {}))["result"]["tools"]
    by_name = {t["name"]: t for t in tools}
    assert "clock__tick" not in by_name and "sdk__echo" in by_name  # app-only: not for the model
    assert by_name["clock__show_clock"]["_meta"] == {"ui": {"resourceUri": UI}}
    resources = (await request("resources/list", {}))["result"]["resources"]
    assert UI in [r["uri"] for r in resources]
    read = (await request("resources/read", {"uri": UI}))["result"]["contents"][0]
    assert read["mimeType"] == "text/html;profile=mcp-app" and read["text"].startswith("<!doctype html>")
    refused = await request("tools/call", {"name": "clock__tick", "arguments": {}})
    unknown = await request("tools/call", {"name": "clock__no_such_tool", "arguments": {}})
    assert refused["error"]["code"] == unknown["error"]["code"]
    assert refused["error"]["message"] == unknown["error"]["message"].replace("clock__no_such_tool", "clock__tick")
    forged = await request("tools/call", {"name": "clock__tick", "arguments": {}, "_meta": {APP_MARKER: "yes"}})
    assert "error" in forged  # only `true` marks an app's request
    ran = await request("tools/call", {"name": "clock__tick", "arguments": {}, "_meta": {APP_MARKER: True, **TRACE}})
    assert _text(ran) == "tick meta=traceparent,tracestate"  # the marker stops here; the trace goes on
    shown = await request("tools/call", {"name": "clock__show_clock", "arguments": {}, "_meta": TRACE})
    assert _text(shown) == "show_clock meta=traceparent,tracestate"


async def test_apps_over_stdio(raw_sidecar: Any, apps_config: Path) -> None:
    async with raw_sidecar(apps_config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["clock__show_clock", "sdk__echo"])

        async def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
            answer: dict[str, Any] = await sc.request(method, params, timeout=30)
            return answer

        await _check_apps(request)


async def test_apps_over_the_http_session_front(http_sidecar: Any, apps_config: Path, tmp_path: Path) -> None:
    async with http_sidecar(apps_config) as sc, aiohttp.ClientSession() as client:
        peer = SessionPeer(sc, client)
        await peer.initialize()
        await _check_apps(peer.request)
        settled = await SessionPeer(sc, client).initialize()  # no upstream here offers tasks: none offered
        assert "tasks" not in settled["result"]["capabilities"]


async def test_an_unselected_servers_app_resource_is_not_served(raw_sidecar: Any, write_config: Any) -> None:
    """Grants hold for `ui://` resources too: a server the bot's selection leaves out is
    not mounted, so its resource is neither listed nor read."""
    config = write_config({"clock": {"command": sys.executable, "args": [str(SERVER)]},
                           "plain": {"command": sys.executable, "args": [str(SERVER)], "env": {"APP": "plain"}}},
                          bot={"selection": {"servers": ["plain"]}})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["plain__show_clock"])
        resources = (await sc.request("resources/list", {}))["result"]["resources"]
        assert [r["uri"] for r in resources] == [UI]  # plain's own, once
        tools = [t["name"] for t in await sc.list_tools()]
        assert not [n for n in tools if n.startswith("clock__")]


async def test_a_denied_app_only_tool_is_refused_even_to_an_app(raw_sidecar: Any, write_config: Any) -> None:
    """The marker opens no door the grants close: a denied app-only tool is unknown to the app too."""
    config = write_config({"clock": {"command": sys.executable, "args": [str(SERVER)]}},
                          grants={"deny": ["clock__tick"]})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["clock__show_clock"])
        denied = await sc.request("tools/call", {"name": "clock__tick", "arguments": {}, "_meta": {APP_MARKER: True}},
                                  timeout=30)
        assert "unknown tool 'clock__tick'" in denied["error"]["message"]
        ran = await sc.request("tools/call", {"name": "clock__show_clock", "arguments": {},
                                              "_meta": {APP_MARKER: True}}, timeout=30)
        assert _text(ran) == "show_clock meta=", ran  # the marker taken off: nothing else was sent
