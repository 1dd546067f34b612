"""The catalog as an engine sees it through the real sidecar: pages, hostile names, an
upstream that cannot start. Late and changing upstreams are driven in memory
(tests/hub/test_first_listing.py, tests/hub/test_list_changes.py)."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.e2e

PROVIDER = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


async def test_upstream_pages_are_followed_and_engine_pages_are_served(raw_sidecar, write_config, fault_server_entry) -> None:
    config = write_config({"f": fault_server_entry("tool-pages=7", "filler-tools=40")}, face={"pageSize": 9})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        tools = await sc.wait_for_tools(["f__filler_039", "f__echo"])
        first = await sc.request("tools/list")
        assert len(first["result"]["tools"]) == 9 and first["result"]["nextCursor"]
        names = [t["name"] for t in tools]
        assert len(names) == len(set(names)) and sum(n.startswith("f__filler_") for n in names) == 40


async def test_hostile_tool_names_and_descriptions_are_made_safe(raw_sidecar, write_config, fault_server_entry) -> None:
    config = write_config({"h": fault_server_entry("bad-tools")}, face={"name": "omb"})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        tools = await sc.wait_for_tools(["h__ctl_desc", "h__query_result", "h__find_tool"])
        for tool in tools:
            assert PROVIDER.match(f"mcp__omb__{tool['name']}"), tool["name"]
        described = {t["name"]: t.get("description") for t in tools}
        assert described["h__ctl_desc"] == "abc[2Jdefg"
        names = [t["name"] for t in tools]
        assert len(names) == len(set(names))
        assert names.count("query_result") == 1 and names[0] == "query_result"  # the sidecar's own, first
        assert "find_tool" not in names
        long = next(n for n in names if n.startswith("h__xxxx"))
        response = await sc.call(long, {})  # the upstream gets its own long name back
        assert "x" * 100 in response["error"]["message"]


async def test_a_failed_upstream_drops_only_itself(raw_sidecar, write_config, fault_server_entry) -> None:
    config = write_config({"dead": fault_server_entry("exit-on-start=4"), "nocmd": {"command": "/nonexistent/binary"},
                           "ok": fault_server_entry()})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        tools = await sc.wait_for_tools(["ok__echo"])
        assert all(t["name"].startswith("ok__") for t in tools if t["name"] != "query_result")
        assert (await sc.call("ok__echo", {"nonce": "still"}))["result"]["content"][0]["text"] == "still"
