"""The bot's selection governs every surface, and what it leaves out is never started
(issue 12, class 6).

Real upstreams with prompts, resources, templates and completions (the `mcp` SDK server
in tests/upstreams/sdk_server.py) and a stdlib one that records its own start at once
(fault_server.py). With `bot.selection` (or grants) leaving some of them out, those are
absent from every list, every read, completion and subscription answers as unknown, on
stdio and over HTTP; and they never start (their own event records stay empty and no
process of theirs exists). Each cut is driven in memory too
(tests/hub/test_selection_in_memory.py); on stdio one cut is kept here with real processes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.config import Grants, Selection, parse_config
from sidecar.gate.grants import Grant
from sidecar.mounts.reach import reaches
from tests.conftest import read_event_file
from tests.selection_cases import SURFACE_REQUESTS

pytestmark = pytest.mark.timeout(180)

# how the bot's config leaves `beta` and `gamma` out while keeping `alpha`
CUTS = {
    "selection.servers": ({"selection": {"servers": ["alpha"]}}, {}),
    "selection.tools": ({"selection": {"tools": ["alpha__*"]}}, {}),
    "grants.allow": ({}, {"grants": {"allow": ["alpha__echo", "alpha__add"]}}),
    "grants.deny": ({}, {"grants": {"deny": ["beta__*", "gamma__*"]}}),
}


def _servers(tmp_path: Path, sdk_server_entry: Any, fault_server_entry: Any) -> tuple[dict[str, Any], dict[str, Path]]:
    events = {alias: tmp_path / f"{alias}.jsonl" for alias in ("alpha", "beta", "gamma")}
    servers = {
        "alpha": sdk_server_entry("alpha", "", events["alpha"]),
        "beta": sdk_server_entry("beta", "", events["beta"]),
        "gamma": fault_server_entry(f"record={events['gamma']}"),
    }
    return servers, events


def _processes_naming(word: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if word.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return found


def _assert_left_out_never_started(events: dict[str, Path]) -> None:
    assert events["alpha"].stat().st_size > 0, "the selected server runs"  # (it may be mid-line: not parsed)
    for alias in ("beta", "gamma"):
        assert not events[alias].exists(), f"{alias} was started: {read_event_file(events[alias])[:3]}"
        assert _processes_naming(str(events[alias])) == [], f"a process of {alias} exists"


def _surfaces(answers: dict[str, dict[str, Any]]) -> None:
    """What each surface answered, judged: only alpha's, and beta's refused."""
    assert [p["name"] for p in answers["prompts/list"]["result"]["prompts"]] == ["alpha__greet", "alpha__plain"]
    uris = [r["uri"] for r in answers["resources/list"]["result"]["resources"]]
    assert uris and all(u.startswith("sdk://alpha/") for u in uris)
    templates = [t["uriTemplate"] for t in answers["resources/templates/list"]["result"]["resourceTemplates"]]
    assert templates and all(t.startswith("sdk://alpha/") for t in templates)
    names = [t["name"] for t in answers["tools/list"]["result"]["tools"]]
    assert names and not [n for n in names if n.startswith(("beta__", "gamma__"))]
    assert "alpha" in json.dumps(answers["read alpha"]["result"])
    assert answers["complete alpha"]["result"]["completion"]["values"]
    for refused in ("get beta", "complete beta prompt"):
        assert "error" in answers[refused], (refused, answers[refused])
    # A URI nobody lists may go to the one upstream that offers resources (alpha): it
    # answers for itself, and nothing of beta's comes back.
    for by_uri in ("read beta", "complete beta template", "subscribe beta"):
        assert "error" in answers[by_uri] or "beta" not in json.dumps(answers[by_uri]["result"]), answers[by_uri]


def _requests() -> dict[str, tuple[str, dict[str, Any]]]:
    return {label: request for label, request in SURFACE_REQUESTS.items() if label != "get alpha"}


@pytest.mark.e2e
@pytest.mark.parametrize("cut", ["grants.deny"])  # every cut runs in memory: tests/hub/test_selection_in_memory.py
async def test_on_stdio_what_the_bot_cannot_reach_is_nowhere_and_never_started(
    cut: str, tmp_path: Path, raw_sidecar: Any, write_config: Any, sdk_server_entry: Any, fault_server_entry: Any,
) -> None:
    servers, events = _servers(tmp_path, sdk_server_entry, fault_server_entry)
    bot, top = CUTS[cut]
    config = write_config(servers, bot=bot, **top)
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["alpha__echo"])
        answers = {label: await sc.request(method, params) for label, (method, params) in _requests().items()}
        _surfaces(answers)
        _assert_left_out_never_started(events)


@pytest.mark.e2e
async def test_over_http_sessions_and_stateless_requests_the_same_holds(
    tmp_path: Path, write_config: Any, sdk_server_entry: Any, fault_server_entry: Any,
) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "http"))
    from http_support import open_http_sidecar

    servers, events = _servers(tmp_path, sdk_server_entry, fault_server_entry)
    config = write_config(servers, bot={"selection": {"servers": ["alpha"]}})
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc, aiohttp.ClientSession() as client:
        async def post(body: dict[str, Any], session: str | None) -> tuple[dict[str, Any], str | None]:
            headers = sc.headers(**({"Mcp-Session-Id": session} if session else {}))
            async with client.post(sc.url, json={"jsonrpc": "2.0", **body}, headers=headers) as response:
                text = await response.text()
                if response.content_type == "text/event-stream":
                    text = next(line[6:] for line in text.splitlines() if line.startswith("data: ") and '"id"' in line)
                return (json.loads(text) if text else {}), response.headers.get("Mcp-Session-Id")

        init, session = await post({"id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}, None)
        assert session and "result" in init
        await post({"method": "notifications/initialized"}, session)
        with anyio.fail_after(30):
            while not any(t["name"] == "alpha__echo" for t in (await post({"id": "l", "method": "tools/list"}, session))[0]["result"]["tools"]):
                await anyio.sleep(0.1)  # bounded: alpha is still starting
        answers = {}
        for n, (label, (method, params)) in enumerate(_requests().items()):
            answers[label] = (await post({"id": n + 1, "method": method, "params": params}, session))[0]
        _surfaces(answers)
        # the 2026-07-28 stateless revision reads through the same face
        modern = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}
        headers = sc.headers(**{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "resources/read",
                                "Mcp-Name": "sdk://beta/static/hello"})
        body = {"jsonrpc": "2.0", "id": "m", "method": "resources/read",
                "params": {"uri": "sdk://beta/static/hello", "_meta": modern}}
        async with client.post(sc.url, json=body, headers=headers) as response:
            assert "error" in json.loads(await response.text())
        headers = sc.headers(**{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "prompts/list"})
        body = {"jsonrpc": "2.0", "id": "p", "method": "prompts/list", "params": {"_meta": modern}}
        async with client.post(sc.url, json=body, headers=headers) as response:
            listed = json.loads(await response.text())["result"]["prompts"]
            assert [p["name"] for p in listed] == ["alpha__greet", "alpha__plain"]
        _assert_left_out_never_started(events)


# -- the server-level cut never hides what the grant allows --------------------------------

ALIAS_POOL = ["files", "files_b", "notes", "fi", "n"]
pattern_parts = st.sampled_from(["files", "files_b", "notes", "fi", "n", "__", "*", "read", "_", "b", "x"])
patterns = st.lists(pattern_parts, min_size=1, max_size=5).map("".join)
tools = st.lists(st.sampled_from(["read", "b__x", "x", "read_b", "notes__read", "_"]), min_size=1, max_size=4)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(ALIAS_POOL),
    tools,
    st.one_of(st.none(), st.lists(st.sampled_from(ALIAS_POOL), max_size=3)),
    st.one_of(st.none(), st.lists(patterns, max_size=3)),
    st.one_of(st.none(), st.lists(patterns, max_size=3)),
    st.lists(patterns, max_size=3),
)
def test_a_server_with_any_granted_tool_is_started(
    alias: str, names: list[str], servers: list[str] | None, selected: list[str] | None,
    allow: list[str] | None, deny: list[str],
) -> None:
    document = {"bot": {"id": "b", "engine": "claude", "selection": None}, "mcpServers": {},
                "grants": {"allow": allow, "deny": deny}}
    if servers is not None or selected is not None:
        document["bot"]["selection"] = {"servers": servers, "tools": selected}  # type: ignore[index]
    config = parse_config(document, {})
    grant = Grant(Selection(servers, selected) if document["bot"]["selection"] else None, Grants(allow, deny))  # type: ignore[index]
    if any(grant.allows(alias, tool) for tool in names):
        assert reaches(config, alias), "a server the grant allows a tool of must be started"
