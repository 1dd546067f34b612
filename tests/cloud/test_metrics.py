"""`GET /metrics` over a real HTTP front with real upstreams, read with prometheus_client's
own parser: calls by upstream, tool and outcome; the duration histogram; upstream state
and restarts; held bytes; sessions; admission like /mcp; label values bounded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.cloud.cloud_support import Client, fault_entry, headers, write_config
from tests.http.http_support import TOKEN, open_http_sidecar

pytestmark = pytest.mark.timeout(120)
CANARY_NAME = "made_up_tool_7f3a9c"
CANARY_SECRET = "canary-secret-9d8e7f6a5b4c"


def samples(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    found: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((sample.labels, sample.value))
    return found


def value(found: dict[str, Any], name: str, **labels: str) -> float:
    return sum(v for l, v in found.get(name, []) if all(l.get(k) == w for k, w in labels.items()))


async def scrape(http: aiohttp.ClientSession, base: str) -> str:
    async with http.get(f"{base}/metrics", headers=headers(TOKEN)) as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        return await response.text()


async def test_metrics_count_calls_by_outcome_and_read_the_face(tmp_path: Path) -> None:
    servers = {"alpha": fault_entry(env={"SECRET": CANARY_SECRET}), "beta": fault_entry()}
    config = write_config(tmp_path, servers, metrics={"enabled": True}, budgets={"resultChars": 2000},
                          grants={"deny": ["beta__pid"]})
    async with open_http_sidecar(config, tmp_path) as sc, aiohttp.ClientSession() as http:
        async with http.get(f"{sc.base}/metrics") as response:
            assert response.status == 401  # the same admission as /mcp
        client = Client(sc.base, TOKEN, http)
        await client.initialize()
        assert "alpha__echo" in await client.tools()
        for nonce in range(3):
            await client.call("alpha__echo", {"nonce": str(nonce)})
        held = await client.call("alpha__records", {"count": 400})
        assert "h_" in str(held["result"])
        denied = await client.call("beta__pid", {})
        assert "error" in denied
        unknown = await client.call(CANARY_NAME, {})
        assert "error" in unknown
        crashed = await client.call("beta__crash", {})
        assert "error" in crashed or crashed["result"].get("isError")

        with anyio.fail_after(20):  # beta restarts after its crash
            while True:
                found = samples(await scrape(http, sc.base))
                if value(found, "omb_upstream_restarts_total", upstream="beta") >= 1 and \
                        value(found, "omb_upstream_state", upstream="beta", state="ready") == 1:
                    break
                await anyio.sleep(0.1)

        assert value(found, "omb_tool_calls_total", upstream="alpha", tool="alpha__echo", outcome="completed") == 3
        assert value(found, "omb_tool_calls_total", upstream="alpha", tool="alpha__records", outcome="held") == 1
        assert value(found, "omb_tool_calls_total", upstream="beta", tool="beta__pid", outcome="denied") == 1
        assert value(found, "omb_tool_calls_total", upstream="beta", tool="beta__crash", outcome="failed") == 1
        assert value(found, "omb_tool_calls_total", tool="(unknown)", outcome="failed") == 1
        assert value(found, "omb_tool_call_duration_seconds_count", upstream="alpha") == 4
        assert value(found, "omb_held_bytes", upstream="alpha") > 2000
        assert value(found, "omb_sessions", face="omb") == 1
        assert value(found, "omb_upstream_state", upstream="alpha", state="ready") == 1
        assert value(found, "omb_upstream_restarts_total", upstream="alpha") == 0
        assert value(found, "omb_notifications_dropped_total") == 0  # every engine here reads
        text = await scrape(http, sc.base)
        assert CANARY_NAME not in text and CANARY_SECRET not in text and "cloud-bot" not in text
        tools = {labels["tool"] for labels, _ in found["omb_tool_calls_total"]}
        assert tools <= {"alpha__echo", "alpha__records", "beta__pid", "beta__crash", "(unknown)"}  # the names the engine sees


async def test_metrics_off_means_no_route_and_no_library(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"alpha": fault_entry()})
    async with open_http_sidecar(config, tmp_path) as sc, aiohttp.ClientSession() as http:
        async with http.get(f"{sc.base}/metrics", headers=headers(TOKEN)) as response:
            assert response.status in (404, 405)


def test_a_gate_records_calls_only_when_watched() -> None:
    from sidecar.config import SidecarConfig
    from sidecar.hub import build_face

    face = build_face(SidecarConfig())
    assert not face.gate.recording  # no audit file, no watcher: nothing to pay
    seen: list[str] = []
    face.gate.observe(lambda call: seen.append(call.name))
    assert face.gate.recording
