"""Every search path through the real sidecar on stdio: `find_tool` (bridged), a big
server's own search (trio) and the shared trio under a cap. Each answer has one shape
(three whole, up to seven more by one line, further names bare, a verdict), stays inside the published byte
budget even over a catalog of long tools, and says when nothing fits."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.catalogs import GITHUB, PLATFORM
from sidecar.catalog.layouts.shown import ANSWER_BYTES, FULL_SHOWN, IN_VIEW, LINE_CHARS, SHORT_SHOWN, shown_names

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

ROOT = Path(__file__).resolve().parents[2]
FAST = ROOT / "bench" / "fast_upstream.py"
# Queries that no tool of these catalogs serves (none shares a word with them).
NOTHING_FITS = "bake a sourdough loaf for grandma"


def agents_entry() -> dict[str, Any]:
    """The platform's 39 tools (generated, about 1.3 KB each), as the built-in catalog."""
    return {"command": sys.executable, "args": [str(FAST), *PLATFORM.argv()], "builtin": True,
            "alwaysListed": ["list_bots", "post_to_room"], "directOnly": ["post_to_room"]}


def big_entry() -> dict[str, Any]:
    """425 generated tools of about 2.8 KB each: long enough that three whole ones overflow."""
    return {"command": sys.executable, "args": [str(FAST), *GITHUB.argv()]}


def answer_of(frame: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    assert "result" in frame, frame
    result = frame["result"]
    assert not result.get("isError"), result
    text = result["content"][0]["text"].encode()
    if result["structuredContent"].get("tools"):  # an answer with tools is its own JSON text
        assert json.loads(text) == result["structuredContent"]
    return result["structuredContent"], text


def check_shape(answer: dict[str, Any], text: bytes) -> None:
    assert len(text) <= ANSWER_BYTES, len(text)
    assert 1 <= len(answer["tools"]) <= FULL_SHOWN and len(answer["more"]) <= SHORT_SHOWN
    assert all({"name", "description", "inputSchema"} <= set(t) for t in answer["tools"])
    assert all(set(t) == {"name", "about"} and len(t["about"]) <= LINE_CHARS + 1 for t in answer["more"])
    assert answer["match"] in ("good", "weak") and "more" in answer["note"] and "names" in answer["note"]
    names = shown_names(answer)
    assert len(names) == len(set(names)) <= IN_VIEW and all(isinstance(n, str) for n in answer.get("names", []))


async def search_both(sc: Any, tool: str, query: str) -> tuple[dict[str, Any], dict[str, Any]]:
    sure, text = answer_of(await sc.call(tool, {"query": query}))
    check_shape(sure, text)
    unsure, text = answer_of(await sc.call(tool, {"query": NOTHING_FITS}))
    if unsure.get("tools"):
        check_shape(unsure, text)
        assert unsure["match"] == "weak" and unsure["areas"]
    else:  # no shared word at all: the names to look up
        assert unsure["names"]
    return sure, unsure


async def test_find_tool_answers_three_whole_seven_by_line_and_says_when_nothing_fits(raw_sidecar, write_config) -> None:
    config = write_config({"agents": agents_entry()}, features={"agentsToolBridge": True})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["find_tool", "use_tool"])
        sure, _ = await search_both(sc, "find_tool", "read the history of a room")
        assert sure["match"] == "good" and len(sure["more"]) == SHORT_SHOWN
        assert len(sure["names"]) >= 20  # most of the 37 hidden tools share a word of the request
        shown = [t["name"] for t in sure["tools"] + sure["more"]]
        assert "agents__get_room_history" in shown
        short = sure["more"][0]["name"]  # a short-listed tool, read whole by its exact name
        whole, _ = answer_of(await sc.call("find_tool", {"query": short}))
        assert [t["name"] for t in whole["tools"]] == [short] and "cut" not in whole["tools"][0]


async def test_a_big_servers_search_cuts_long_tools_to_the_budget(raw_sidecar, write_config) -> None:
    config = write_config({"gh": big_entry()}, face={"layout": "trio"})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["gh__search_tools", "gh__describe_tool", "gh__call_tool"])
        sure, _ = await search_both(sc, "gh__search_tools", "echo the arguments back as text")
        assert sure["tools"][0]["name"] == "gh__echo"
        long_tools = [t for t in sure["tools"] if t.get("cut")]
        for tool in long_tools:  # cut to fit, and the describe tool still gives it whole
            described = (await sc.call("gh__describe_tool", {"name": tool["name"]}))["result"]["structuredContent"]
            assert len(json.dumps(described)) > len(json.dumps(tool))


async def test_the_shared_trio_answers_in_the_same_shape(raw_sidecar, write_config) -> None:
    config = write_config({"agents": agents_entry(), "gh": big_entry()}, bot={"engine": "api"},
                          budgets={"toolCap": 20}, face={"layout": "cap"})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        listed = await sc.wait_for_tools(["mcp_search_tools", "mcp_call_tool"])
        search = next(t for t in listed if t["name"] == "mcp_search_tools")
        assert "before searching again" in search["description"] and "names" in search["description"]
        sure, _ = await search_both(sc, "mcp_search_tools", "echo the arguments back as text")
        assert any(t["name"] == "gh__echo" for t in sure["tools"])
