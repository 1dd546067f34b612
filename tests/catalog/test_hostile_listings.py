"""Hostile listings through the real sidecar process (stdio upstream, `list_changed` to
re-read): text that is not valid Unicode costs only its own item, and one tool's size
is capped, with the excess cut and marked."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

HOSTILE = Path(__file__).resolve().parents[1] / "upstreams" / "hostile_server.py"
# Bad text as raw JSON bytes: each breaks msgspec's decode of the whole frame.
BAD_TEXT = [b'"\\ud800"', b'"a\\udfffb"', b'"\\udbff"', b'"\\x41"', b'"\xed\xa0\x80"', b'"\xc0\xaf"',
            b'"raw\x01control"', b'"\\ud83d\\ud83d\\ude00"']


def hostile(lists: Path) -> dict[str, Any]:
    # its tools change on purpose between listings: pinning would hold the new ones
    return {"command": sys.executable, "args": [str(HOSTILE), f"lists={lists}"], "pinning": "warn"}


def good_tool(name: str, rng: random.Random) -> tuple[bytes, dict[str, Any]]:
    tool = {"name": name, "description": f"does {name} " + "é" * rng.randint(0, 5), "inputSchema": {
        "type": "object", "properties": {"q": {"type": "string"}}}}
    return json.dumps(tool).encode(), tool


def bad_tool(name: str, rng: random.Random) -> tuple[bytes, str]:
    """A tool with bad text somewhere; returns its bytes and where the bad text is."""
    bad = rng.choice(BAD_TEXT)
    where = rng.choice(["description", "property", "title", "name"])
    if where == "description":
        return b'{"name":"%s","description":%s,"inputSchema":{"type":"object"}}' % (name.encode(), bad), where
    if where == "property":
        return (b'{"name":"%s","inputSchema":{"type":"object","properties":{"q":{"description":%s}}}}'
                % (name.encode(), bad)), where
    if where == "title":
        return b'{"name":"%s","title":%s,"inputSchema":{"type":"object"}}' % (name.encode(), bad), where
    return b'{"name":%s,"inputSchema":{"type":"object"}}' % bad, where


async def relisted(sc: Any) -> list[dict[str, Any]]:
    mark = len(sc.frames)
    await sc.call("h__relist")
    await sc.notification("notifications/tools/list_changed", start=mark)
    return await sc.list_tools()


async def test_bad_text_costs_only_its_own_item(raw_sidecar, write_config, tmp_path: Path) -> None:
    rng = random.Random(8)
    lists = tmp_path / "lists"
    lists.mkdir()
    config = write_config({"h": hostile(lists)}, face={"layout": "full"})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["h__relist"])
        for instance in range(30):
            parts = [b'{"name":"relist","inputSchema":{"type":"object"}}']
            good: dict[str, dict[str, Any]] = {}
            bad: dict[str, str] = {}
            for n in range(rng.randint(2, 8)):
                name = f"t{instance}_{n}"
                if rng.random() < 0.4:
                    raw, where = bad_tool(name, rng)
                    bad[name] = where
                else:
                    raw, tool = good_tool(name, rng)
                    good[name] = tool
                parts.append(raw)
            (lists / "tools.json").write_bytes(b'{"tools":[' + b",".join(parts) + b"]}")
            listed = {t["name"]: t for t in await relisted(sc)}
            for name, tool in good.items():
                assert listed[f"h__{name}"]["description"] == tool["description"]  # untouched
            for name, where in bad.items():
                if where == "name":
                    continue  # a name that was not valid text is left out (it could never be called)
                assert f"h__{name}" in listed, (instance, name, where)  # repaired, still there
        assert not any(n.startswith("h__\ufffd") for n in listed)
        assert "did not answer" not in sc.stderr and "Traceback" not in sc.stderr
        assert "not valid (" in sc.stderr  # the real reason, e.g. "a lone UTF-16 surrogate"
        assert (await sc.call("h__relist"))["result"]["content"][0]["text"] == "relisted"  # the same process


async def test_bad_text_in_prompts_and_resources_costs_only_that_item(raw_sidecar, write_config, tmp_path: Path) -> None:
    lists = tmp_path / "lists"
    lists.mkdir()
    (lists / "prompts.json").write_bytes(b'{"prompts":[{"name":"fine","description":"ok"},'
                                         b'{"name":"odd","description":"\\ud800"},{"name":"also_fine"}]}')
    (lists / "resources.json").write_bytes(b'{"resources":[{"uri":"mem://a","name":"a"},'
                                           b'{"uri":"mem://b","name":"\\udc00"},{"uri":"mem://c","name":"c"}]}')
    config = write_config({"h": hostile(lists)}, face={"layout": "full"})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["h__echo"])
        prompts = (await sc.request("prompts/list"))["result"]["prompts"]
        assert {p["name"] for p in prompts} == {"h__fine", "h__odd", "h__also_fine"}
        resources = (await sc.request("resources/list"))["result"]["resources"]
        assert [r["uri"] for r in resources] == ["mem://a", "mem://b", "mem://c"]
        assert "\ufffd" in resources[1]["name"]
        assert "a lone UTF-16 surrogate" in sc.stderr


@pytest.mark.parametrize("size", [70_000, 5_000_000])
async def test_one_tools_size_is_capped_with_a_marker(raw_sidecar, write_config, tmp_path: Path, size: int) -> None:
    lists = tmp_path / "lists"
    lists.mkdir()
    rng = random.Random(size)
    huge_schema = {"type": "object", "properties": {f"p{i}": {"type": "string", "description": "d" * 200}
                                                    for i in range(size // 220)}, "required": ["p0"]}
    tools = [
        {"name": "long_words", "description": "w" * size, "inputSchema": {"type": "object"}},
        {"name": "wide_schema", "description": "fine", "inputSchema": huge_schema},
        {"name": "wide_output", "description": "fine", "inputSchema": {"type": "object"},
         "outputSchema": huge_schema},
        {"name": "small", "description": "s" * rng.randint(1, 1000), "inputSchema": {"type": "object"}},
    ]
    (lists / "tools.json").write_text(json.dumps({"tools": tools}))
    config = write_config({"h": hostile(lists)}, face={"layout": "full"})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        listed = {t["name"]: t for t in await sc.wait_for_tools(["h__long_words", "h__small"])}
        words = listed["h__long_words"]["description"]
        assert len(words) < 64 * 1024 + 200 and words.startswith("w" * 1000)
        assert f"cut by the sidecar: {size} characters, over its limit of 65536" in words
        schema = listed["h__wide_schema"]["inputSchema"]
        assert schema["type"] == "object" and len(json.dumps(schema)) <= 64 * 1024
        assert "over the sidecar's limit" in schema["description"]
        if "properties" in schema:
            assert set(schema["properties"]) == set(huge_schema["properties"]) and schema["required"] == ["p0"]
        assert "outputSchema" not in listed["h__wide_output"]
        assert listed["h__small"]["description"] == tools[3]["description"]
        total = len(json.dumps(list(listed.values())))
        assert total < 4 * 64 * 1024 + 10_000


async def test_check_reports_the_tools_over_the_caps(tmp_path: Path) -> None:
    from sidecar.config import ServerConfig
    from sidecar_admin.check import check_server

    lists = tmp_path / "lists"
    lists.mkdir()
    tools = [{"name": f"big{n}", "description": "b" * 70_000, "inputSchema": {"type": "object"}} for n in range(3)]
    (lists / "tools.json").write_text(json.dumps({"tools": [*tools, {"name": "ok", "inputSchema": {}}]}))
    entry = hostile(lists)
    server = ServerConfig(alias="h", command=entry["command"], args=entry["args"])
    with anyio.fail_after(30):
        result = await check_server(server)
    assert result.ok and result.cut_tools == ["big0", "big1", "big2"]
    assert any("3 of its tools are over the size limits" in w and "big0" in w for w in result.warnings)
