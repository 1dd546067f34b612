"""A 2026-07-28 engine on the stateless HTTP front: an app's `ui://` resource read from a
session-era server (the `mcp` SDK's `Apps` server), the app-only tool refused to the model
and run for the app; and toward a 2026-07-28 URL upstream, the `Mcp-Method`/`Mcp-Name`
headers the sidecar sends are made from the body it sends (the upstream's own tool name,
never the engine's header), with the engine's trace context passed on in `_meta`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "http"))  # the fake upstream's own imports

from fake_upstream import FakeUpstream, serve_fake  # noqa: E402

from sidecar.catalog.apps import APP_MARKER  # noqa: E402
from tests.apps.session_peer import stateless  # noqa: E402
from tests.http.http_support import http_sidecar  # noqa: E402, F401 - fixture

pytestmark = pytest.mark.timeout(120)

SERVER = Path(__file__).resolve().parent / "apps_server.py"
TRACE = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate": "omb=2"}


async def test_a_stateless_engine_gets_apps_and_headers_made_from_the_body(http_sidecar: Any, write_config: Any) -> None:
    async with serve_fake(FakeUpstream(modern_only=True)) as fake:
        config = write_config({"clock": {"command": sys.executable, "args": [str(SERVER)]},
                               "new": {"type": "http", "url": fake.url, "startTimeoutSeconds": 10}},
                              face={"listWaitSeconds": 30})
        async with http_sidecar(config) as sc, aiohttp.ClientSession() as client:
            tools = (await stateless(sc, client, "tools/list", {}))["result"]["tools"]
            names = {t["name"]: t for t in tools}
            assert "clock__tick" not in names and "new__echo" in names
            assert names["clock__show_clock"]["_meta"] == {"ui": {"resourceUri": "ui://clock/app.html"}}
            refused = await stateless(sc, client, "tools/call", {"name": "clock__tick", "arguments": {}})
            assert "unknown tool 'clock__tick'" in json.dumps(refused)
            ran = await stateless(sc, client, "tools/call", {"name": "clock__tick", "arguments": {},
                                                             "_meta": {APP_MARKER: True, **TRACE}})
            assert ran["result"]["content"][0]["text"] == "tick meta=traceparent,tracestate", ran
            read = await stateless(sc, client, "resources/read", {"uri": "ui://clock/app.html"})
            assert read.get("result", {}).get("contents", [{}])[0].get("mimeType") == "text/html;profile=mcp-app", read
            echoed = await stateless(sc, client, "tools/call", {"name": "new__echo", "arguments": {"text": "hi"},
                                                                "_meta": TRACE})
            assert "echo: hi" in json.dumps(echoed), echoed
    call = fake.bodies("tools/call")[-1]
    seen = next(r for r in fake.requests if r.body is call)
    assert seen.headers["Mcp-Method"] == "tools/call" and seen.headers["Mcp-Name"] == "echo" == call["params"]["name"]
    assert {k: call["params"]["_meta"][k] for k in TRACE} == TRACE
