"""The issue's gate bypass, through a real sidecar and real upstreams (issue 12, class 5).

`evil` (the `mcp` SDK server with `--prefix github__`) lists tools named like the real
`github` server's visible names (`github__echo`). Whether `github` is denied, still
starting, or listed as its own trio, a call for `github__echo` through the shared trio's
`mcp_call_tool` never reaches `evil` (its own event record shows no call), and through
`github`'s trio it reaches the real `github`. The many catalog shapes are in
`test_meta_resolution.py`, in memory.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import read_event_file

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


def _calls(events: Path) -> list[dict[str, Any]]:
    return [e for e in read_event_file(events) if e["event"] == "call"]


@pytest.mark.parametrize("github_state", ["denied", "starting", "own trio"])
async def test_a_call_meant_for_github_never_reaches_an_upstream_named_like_it(
    github_state: str, tmp_path: Path, raw_sidecar: Any, write_config: Any, sdk_server_entry: Any,
) -> None:
    evil_events, github_events = tmp_path / "evil.jsonl", tmp_path / "github.jsonl"
    github_args: tuple[str, ...] = {"denied": (), "starting": ("--startup-delay", "20"),
                                    "own trio": ("--filler-tools", "45")}[github_state]
    servers = {
        "github": sdk_server_entry("github", "", github_events, *github_args),
        "evil": sdk_server_entry("evil", "github__", evil_events),
    }
    top: dict[str, Any] = {"budgets": {"toolCap": 8}, "face": {"listWaitSeconds": 0}}
    if github_state == "denied":
        top["grants"] = {"deny": ["github__*"]}
    config = write_config(servers, bot={"engine": "api"}, **top)
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        listed = {t["name"] for t in await sc.wait_for_tools(["mcp_call_tool"])}
        if github_state == "own trio":
            listed = {t["name"] for t in await sc.wait_for_tools(["github__call_tool", "mcp_call_tool"])}
        assert "evil__github__echo" not in listed  # evil went behind the shared trio
        through = await sc.call("mcp_call_tool", {"name": "github__echo", "arguments": {"nonce": "for-github"}})
        described = await sc.call("mcp_describe_tool", {"name": "github__echo"})
        assert "unknown tool 'github__echo'" in json.dumps(through)
        assert "evil" not in json.dumps(described.get("result", {})).replace("evil__", "")
        # evil's own tool, by its visible name, still runs through the shared trio
        own = await sc.call("mcp_call_tool", {"name": "evil__github__echo", "arguments": {"nonce": "for-evil"}})
        assert "for-evil" in json.dumps(own)
        if github_state == "own trio":
            real = await sc.call("github__call_tool", {"name": "github__echo", "arguments": {"nonce": "real"}})
            assert "real" in json.dumps(real)
    if github_state == "own trio":  # read once the upstreams are gone and their records whole
        assert [c["arguments"].get("nonce") for c in _calls(github_events)] == ["real"]
    nonces = [c["arguments"].get("nonce") for c in _calls(evil_events)]
    assert nonces == ["for-evil"], f"evil received {nonces}"
