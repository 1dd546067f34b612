"""Layouts through the real sidecar: what the engine lists, and that meta-tools take the
same path as direct calls (byte-identical answers and refusals)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

EXAMPLES = Path(__file__).resolve().parents[2] / "sidecar" / "examples"


def agents_entry() -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(EXAMPLES / "agents.py")], "builtin": True,
            "alwaysListed": ["list_bots", "post_to_room"], "directOnly": ["post_to_room"]}


def notes_entry() -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(EXAMPLES / "notes.py")]}


def result_of(frame: dict[str, Any]) -> str:
    return json.dumps(frame.get("result", frame.get("error")), sort_keys=True)


async def test_bridged_lists_the_always_listed_set_and_reaches_every_hidden_tool(raw_sidecar, write_config) -> None:
    config = write_config({"agents": agents_entry(), "notes": notes_entry()}, features={"agentsToolBridge": True})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        tools = await sc.wait_for_tools(["agents__list_bots", "notes__search_notes", "find_tool", "use_tool"])
        names = [t["name"] for t in tools]
        assert "agents__read_room" not in names  # hidden behind the bridge
        assert {"agents__post_to_room", "notes__add_note", "query_result"} <= set(names)
        found = await sc.call("find_tool", {"query": "read recent room messages"})
        assert "agents__read_room" in json.dumps(found["result"])
        await sc.call("agents__post_to_room", {"text": "first"})
        direct = await sc.call("agents__read_room", {"limit": 5})
        bridged = await sc.call("use_tool", {"name": "agents__read_room", "arguments": {"limit": 5}})
        assert result_of(direct) == result_of(bridged) and "first" in result_of(direct)
        refused_direct = await sc.call("agents__nope", {})
        refused_bridged = await sc.call("use_tool", {"name": "agents__nope", "arguments": {}})
        assert json.dumps(refused_direct["error"]) == json.dumps(refused_bridged["error"])
        send = await sc.call("use_tool", {"name": "agents__post_to_room", "arguments": {"text": "x"}})
        assert "call it directly" in json.dumps(send)


async def test_a_bot_with_a_selection_is_never_bridged(raw_sidecar, write_config) -> None:
    config = write_config({"agents": agents_entry()}, features={"agentsToolBridge": True},
                          bot={"selection": {"servers": ["agents"]}})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        tools = await sc.wait_for_tools(["agents__read_room"])
        assert "use_tool" not in {t["name"] for t in tools}


async def test_the_trio_for_a_big_server_and_its_call_path(raw_sidecar, write_config, fault_server_entry) -> None:
    config = write_config({"big": fault_server_entry("filler-tools=60"), "small": fault_server_entry()},
                          face={"layout": "trio"})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        tools = await sc.wait_for_tools(["big__search_tools", "big__describe_tool", "big__call_tool", "small__echo"])
        names = {t["name"] for t in tools}
        assert not any(n.startswith("big__filler") for n in names)
        found = await sc.call("big__search_tools", {"query": "echo the nonce"})
        assert "echo" in json.dumps(found["result"])
        described = await sc.call("big__describe_tool", {"name": "big__echo"})
        assert "nonce" in json.dumps(described["result"])
        through = await sc.call("big__call_tool", {"name": "big__echo", "arguments": {"nonce": "n1"}})
        direct = await sc.call("big__echo", {"nonce": "n1"})
        assert result_of(through) == result_of(direct)


async def test_the_cap_is_never_exceeded_and_names_what_went_behind_search(raw_sidecar, write_config, fault_server_entry) -> None:
    servers = {f"s{i}": fault_server_entry("filler-tools=5", f"name=s{i}") for i in range(4)}
    config = write_config(servers, bot={"engine": "api"}, budgets={"toolCap": 30})
    async with raw_sidecar(config, "--log-level", "INFO") as sc:
        await sc.initialize()
        tools = await sc.wait_for_tools(["mcp_search_tools", "mcp_call_tool", "s0__echo"])
        assert len(tools) <= 30
        search = next(t for t in tools if t["name"] == "mcp_search_tools")
        behind = [alias for alias in servers if f"{alias}__echo" not in {t["name"] for t in tools}]
        assert behind and all(alias in search["description"] for alias in behind)
        call = await sc.call("mcp_call_tool", {"name": f"{behind[-1]}__echo", "arguments": {"nonce": "capped"}})
        assert "capped" in json.dumps(call["result"])
