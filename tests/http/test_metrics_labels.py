"""Metrics labels come from the names the engine sees, each capped in one place, and a
tool's series leave with the tool (issue 22, class 10).

Over a real HTTP front on 127.0.0.1 with a real stdio upstream whose tools change: a
300,000-character upstream tool name keeps /metrics small, and the series of tools that
leave the catalog are gone at the next scrape. In memory: generated names and labels of
any length never make a label longer than the cap.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from sidecar.catalog import CatalogEntry
from sidecar.gate.observers.metrics import LABEL_CAP, FrontMetrics, label_values
from sidecar.gate import ToolCall
from tests.cloud.cloud_support import Client, headers, write_config
from tests.http.http_support import TOKEN, open_http_sidecar

SHIFTY = Path(__file__).resolve().parents[1] / "trust" / "shifty_server.py"
LONG_NAME = "n" * 300_000
SMALL = 16 * 1024  # /metrics of one face, one upstream and a few tools: a few KB


def _tool(name: str) -> dict[str, Any]:
    return {"name": name, "description": "Answers.", "inputSchema": {"type": "object", "properties": {}}}


def _series(text: str) -> list[dict[str, str]]:
    return [sample.labels for family in text_string_to_metric_families(text) for sample in family.samples]


async def _scrape(http: aiohttp.ClientSession, base: str) -> str:
    async with http.get(f"{base}/metrics", headers=headers(TOKEN)) as response:
        assert response.status == 200
        return await response.text()


@pytest.mark.timeout(120)
async def test_a_huge_upstream_name_keeps_metrics_small_and_series_leave_with_their_tool(tmp_path: Path) -> None:
    tools_file = tmp_path / "tools.json"
    tools_file.write_text(json.dumps([_tool(LONG_NAME), _tool("keep_me"), _tool("goes_away")]))
    other_file = tmp_path / "other.json"
    other_file.write_text(json.dumps([_tool("goes_away")]))
    server = {"command": sys.executable, "args": [str(SHIFTY), str(tools_file)], "pinning": "off"}
    config = write_config(tmp_path, {"shifty": server, "other": {**server, "args": [str(SHIFTY), str(other_file)]}},
                          metrics={"enabled": True})
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc, aiohttp.ClientSession() as http:
        client = Client(sc.base, TOKEN, http)
        await client.initialize()
        with anyio.fail_after(30):
            while not {"shifty__keep_me", "shifty__goes_away", "other__goes_away"} <= set(names := await client.tools()):
                await anyio.sleep(0.05)
        long_exposed = next(n for n in names if n.startswith("shifty__") and n.count("n") > 20)
        for name in (long_exposed, "shifty__keep_me", "shifty__goes_away", "other__goes_away"):
            answer = await client.call(name, {})
            assert "ran " in json.dumps(answer), answer

        text = await _scrape(http, sc.base)
        assert len(text.encode()) < SMALL, len(text)
        assert all(len(value) <= LABEL_CAP for labels in _series(text) for value in labels.values())
        called = {labels["tool"] for labels in _series(text) if "tool" in labels}
        assert {long_exposed, "shifty__keep_me", "shifty__goes_away", "other__goes_away"} <= called
        assert LONG_NAME[:200] not in text  # never the upstream's own name

        tools_file.write_text(json.dumps([_tool("keep_me")]))
        await client.call("shifty__reload_tools", {})  # shifty's list changes; other's stays
        with anyio.fail_after(30):
            while "shifty__goes_away" in await client.tools():
                await anyio.sleep(0.05)
        left = {labels["tool"] for labels in _series(await _scrape(http, sc.base)) if "tool" in labels}
        assert "shifty__keep_me" in left and "other__goes_away" in left
        assert long_exposed not in left and "shifty__goes_away" not in left


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.text(min_size=1, max_size=400), st.text(min_size=1, max_size=400)), min_size=1,
                max_size=6), st.text(max_size=300))
def test_no_label_is_longer_than_the_cap_whatever_the_names(pairs: list[tuple[str, str]], face: str) -> None:
    metrics = FrontMetrics()
    seen = metrics.observer(face)
    for alias, exposed in pairs:
        call = ToolCall(name=exposed, arguments={}, target=CatalogEntry(exposed, alias, "x" * 5000, {}))
        call.outcome = "completed"
        seen(call)
    text = metrics.render().decode()
    values = [value for labels in _series(text) for value in labels.values()]
    assert values and all(len(value) <= LABEL_CAP for value in values)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=2 * LABEL_CAP), min_size=2, max_size=2, unique=True))
def test_the_cap_keeps_short_values_and_keeps_long_ones_apart(values: list[str]) -> None:
    capped = label_values(*values)
    assert all(len(value) <= LABEL_CAP for value in capped)
    assert [c for v, c in zip(values, capped) if len(v) <= LABEL_CAP] == [v for v in values if len(v) <= LABEL_CAP]
    assert capped[0] != capped[1]
