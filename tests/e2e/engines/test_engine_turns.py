"""Real engine turns through the shims: Claude Code 2.1.197, Codex 0.171.0, pi 0.73.1.

Each test runs one turn in its own loopback-only network and PID namespace (see
engine_turn.py): the engine is launched by its shim with the sidecar in front of two or
more upstreams, talks to a model API faked on 127.0.0.1 that calls scripted tools, and
the report says what the engine sent the model. Per engine the tests show:

* the tool names sent to the model are the layout that engine should get (full for
  Claude Code and Codex; bridged for Claude Code when switched on and not refused; the
  big-server trio for a big address (URL) server on pi);
* a tool call reaches the right upstream, and a large JSON result reaches the model
  shaped by the sidecar's budget (a view and a `query_result` handle, not 20 KB);
* no process of the turn outlives it, and no secret value is on any process's argv at
  any sweep of /proc during the turn.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import agents_entry, base_env, canary, fault_entry, notes_entry, run_turn
from engine_helpers import engine_path as find_engine
from turn_facts import offered_tools, tool_results

pytestmark = [pytest.mark.engines, pytest.mark.e2e, pytest.mark.timeout(300)]

Turn = Callable[[dict[str, Any]], dict[str, Any]]


@pytest.fixture
def turn(tmp_path: Path) -> Turn:
    """Run one turn (see engine_turn.py) and return its report."""
    return lambda spec: run_turn(spec, tmp_path)


@pytest.fixture
def engine_path() -> Callable[[str], str]:
    """The pinned engine's executable; the test is skipped when it is not installed."""
    return find_engine
RECORDS = 300  # ~20 KB of JSON from the fault server's `records`: over the 8,000-character budget
AGENTS_TOOLS = {"agents__list_bots", "agents__post_to_room", "agents__read_room"}


def assert_clean(result: dict[str, Any]) -> None:
    """The turn ended, nothing outlived it, no secret was on any argv."""
    assert result["exit_code"] == 0, f"{result['stdout'][-3000:]}\n{result['stderr'][-3000:]}"
    assert result["survivors"] == []
    assert result["canary_hits"] == []
    assert result["argv_sweeps"] > 10 and result["argvs_seen"] >= 3
    modes = result["launch"]["files"]
    assert all(mode == "0o600" for name, mode in modes.items() if name.endswith(".json")), modes
    assert next(iter(modes.values())) == "0o700"  # the private folder itself


def assert_shaped(text: str) -> None:
    """A large JSON result reached the model as the gate's view, not whole."""
    assert len(text) < 9000, len(text)
    assert "query_result" in text
    assert "rec-299" not in text  # the last record stayed behind the handle


def fault_calls(record: Path) -> list[str]:
    events = [json.loads(line) for line in record.read_text().splitlines() if line.strip()]
    names = []
    for event in events:
        frame = event.get("raw") or event.get("frame") or ""
        if isinstance(frame, str) and '"tools/call"' in frame:
            names.append(json.loads(frame)["params"]["name"])
    return names


# -- Claude Code -----------------------------------------------------------------------


def claude_spec(tmp_path: Path, claude: str, settings: dict[str, Any], steps: list[dict[str, Any]],
                secret: str, folder: Path, extra_args: tuple[str, ...] = ()) -> dict[str, Any]:
    api_key = canary()
    env = {**base_env(tmp_path / "home"), "ANTHROPIC_BASE_URL": "{base_url}", "ANTHROPIC_API_KEY": api_key,
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}
    managed = tmp_path / "machine"  # no managed policy on this (test) machine
    managed.mkdir(exist_ok=True)
    return {
        "shim": "claude", "dialect": "anthropic", "script": {"steps": steps}, "settings": settings,
        "options": {"executable": claude, "folder": str(folder), "managed_root": str(managed)},
        "args": ["-p", "use the tools", "--output-format", "stream-json", "--verbose", "--tools", "", *extra_args],
        "env": env, "canaries": [secret, api_key], "timeout": 120,
    }


def claude_settings(secret: str, record: Path, bridge: bool) -> dict[str, Any]:
    return {
        "bot": {"id": "otto", "selection": None},
        "features": {"agentsToolBridge": bridge},
        "mcpServers": {
            "agents": agents_entry(alwaysListed=["list_bots", "post_to_room"], directOnly=["post_to_room"]),
            "fault": fault_entry(f"record={record}", env={"FAULT_TOKEN": secret}),
        },
    }


def test_claude_full_layout_builtin_preallowed_person_tools_asked(turn: Turn, engine_path: Callable[[str], str],
                                                                    tmp_path: Path) -> None:
    secret, record, folder = canary(), tmp_path / "fault.jsonl", tmp_path / "work"
    folder.mkdir()
    steps = [
        {"name": "agents__list_bots"},
        {"name": "fault__echo", "arguments": {"nonce": "never-allowed"}},  # a person's tool, not pre-allowed
        {"name": "fault__records", "arguments": {"count": RECORDS}},  # allowed by the person's own flag
    ]
    spec = claude_spec(tmp_path, engine_path("claude"), claude_settings(secret, record, bridge=False), steps, secret,
                       folder, ("--allowedTools", "mcp__omb__fault__records"))
    result = turn(spec)
    assert_clean(result)
    launch = result["launch"]
    assert launch["bridged"] is False and "switch is off" in launch["bridge_reason"]
    argv = launch["argv"]
    assert "--strict-mcp-config" in argv and argv[argv.index("--setting-sources") + 1] == "project"
    allowed = argv[argv.index("--allowedTools") + 1].split(",")
    assert set(allowed) == {f"mcp__omb__{n}" for n in (*AGENTS_TOOLS, "query_result")}
    tools = offered_tools(result)
    ours = {t.removeprefix("mcp__omb__") for t in tools if t.startswith("mcp__omb__")}
    assert all(t.startswith("mcp__omb__") for t in tools)  # `--tools ""`: only the sidecar's tools
    assert AGENTS_TOOLS | {"query_result", "fault__records", "fault__echo"} <= ours
    assert not {"find_tool", "use_tool"} & ours
    assert all(n.startswith(("agents__", "fault__")) or n == "query_result" for n in ours)
    bots, denied, records = tool_results(result, "anthropic")
    assert "iris" in bots.text and not bots.is_error
    assert denied.is_error
    assert_shaped(records.text)
    assert fault_calls(record) == ["records"]  # the refused call never reached the upstream


def test_claude_bridged_when_switched_on_and_nothing_refuses(turn: Turn, engine_path: Callable[[str], str],
                                                             tmp_path: Path) -> None:
    secret, record, folder = canary(), tmp_path / "fault.jsonl", tmp_path / "work"
    folder.mkdir()
    steps = [
        {"name": "find_tool", "arguments": {"query": "read the recent messages of the room"}},
        {"name": "use_tool", "arguments": {"name": "agents__read_room", "arguments": {"limit": 3}}},
    ]
    spec = claude_spec(tmp_path, engine_path("claude"), claude_settings(secret, record, bridge=True), steps, secret, folder)
    result = turn(spec)
    assert_clean(result)
    launch = result["launch"]
    assert launch["bridged"] is True, launch["bridge_reason"]
    assert launch["sidecar_config"]["features"]["agentsToolBridge"] is True
    assert launch["mcp_config"]["mcpServers"]["omb"]["env"]["OMB_AGENTS_TOOL_BRIDGE"] == "1"
    allowed = set(launch["argv"][launch["argv"].index("--allowedTools") + 1].split(","))
    assert {"mcp__omb__find_tool", "mcp__omb__use_tool", "mcp__omb__query_result"} <= allowed
    assert not any("fault__" in name for name in allowed)
    ours = {t.removeprefix("mcp__omb__") for t in offered_tools(result)}
    # SPEC §4: the always-listed built-ins and find_tool/use_tool; the rest of the
    # built-in catalog hidden; the person's server listed whole.
    assert {"agents__list_bots", "agents__post_to_room", "find_tool", "use_tool", "query_result"} <= ours
    assert "agents__read_room" not in ours
    assert {"fault__records", "fault__echo"} <= ours
    found, used = tool_results(result, "anthropic")
    assert "read_room" in found.text and not found.is_error
    assert used.text.strip() == "[]" and not used.is_error


def test_claude_refused_bridge_lists_full(turn: Turn, engine_path: Callable[[str], str], tmp_path: Path) -> None:
    secret, record, folder = canary(), tmp_path / "fault.jsonl", tmp_path / "work"
    (folder / ".claude").mkdir(parents=True)
    # A deny rule about another server, with a wildcard: it could reach a tool by pattern
    # when called directly and miss the same call made through use_tool.
    (folder / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["mcp__github__*"]}}))
    steps = [{"name": "agents__read_room", "arguments": {"limit": 2}}]
    spec = claude_spec(tmp_path, engine_path("claude"), claude_settings(secret, record, bridge=True), steps, secret, folder)
    result = turn(spec)
    assert_clean(result)
    launch = result["launch"]
    assert launch["bridged"] is False and "wildcard" in launch["bridge_reason"]
    assert launch["sidecar_config"]["features"]["agentsToolBridge"] is False
    assert launch["sidecar_config"]["face"]["layout"] == "full"
    assert launch["mcp_config"]["mcpServers"]["omb"]["env"]["OMB_AGENTS_TOOL_BRIDGE"] == "0"
    ours = {t.removeprefix("mcp__omb__") for t in offered_tools(result)}
    assert AGENTS_TOOLS <= ours and not {"find_tool", "use_tool"} & ours
    (read,) = tool_results(result, "anthropic")
    assert read.text.strip() == "[]" and not read.is_error


# -- Codex -------------------------------------------------------------------------------


def test_codex_full_layout_dedupes_user_servers(turn: Turn, engine_path: Callable[[str], str], tmp_path: Path) -> None:
    secret, notes_secret, api_key = canary(), canary(), canary()
    record = tmp_path / "fault.jsonl"
    codex_home = tmp_path / "codex-home"
    notes = notes_entry(env={"NOTES_TOKEN": notes_secret})
    user_config = (  # the user's own Codex runs the same notes server
        "[mcp_servers.notes]\n"
        f"command = {json.dumps(notes['command'])}\n"
        f"args = {json.dumps(notes['args'])}\n"
        f"env = {{ NOTES_TOKEN = {json.dumps(notes_secret)} }}\n"
    )
    settings = {
        "bot": {"id": "cody", "selection": None},
        "mcpServers": {"agents": agents_entry(), "fault": fault_entry(f"record={record}", env={"FAULT_TOKEN": secret}),
                       "notes": notes},
    }
    env = {**base_env(tmp_path / "home"), "CODEX_HOME": str(codex_home), "FAKE_KEY": api_key,
           "OMB_MCP_RESULT_BUDGET": "8000"}
    args = [
        "exec", "--skip-git-repo-check", "--ephemeral", "-s", "read-only", "--json",
        "-c", 'model_providers.fake={name="Fake", base_url="{base_url}/v1", env_key="FAKE_KEY", wire_api="responses"}',
        "-c", "model_provider=fake", "-m", "fake-model", "-c", "analytics.enabled=false",
        "-c", "check_for_update_on_startup=false", "--disable", "plugins", "--disable", "remote_plugin",
        "use the tools",
    ]
    steps = [{"name": "agents__list_bots"}, {"name": "fault__records", "arguments": {"count": RECORDS}}]
    spec = {
        "shim": "codex", "dialect": "responses", "script": {"steps": steps}, "settings": settings,
        "options": {"executable": engine_path("codex"), "approved_servers": ["fault"]},
        "args": args, "env": env, "files": {str(codex_home / "config.toml"): user_config},
        "canaries": [secret, notes_secret, api_key], "timeout": 120,
    }
    result = turn(spec)
    assert_clean(result)
    launch = result["launch"]
    assert launch["dropped"] == ["notes"] and "notes" not in launch["sidecar_config"]["mcpServers"]
    argv = launch["argv"]
    assert 'mcp_servers.omb.env_vars=["OMB_MCP_RESULT_BUDGET"]' in argv
    assert "mcp_servers.omb.required=true" in argv
    assert 'mcp_servers.omb.tools.agents__list_bots.approval_mode="approve"' in argv
    assert 'mcp_servers.omb.tools.fault__records.approval_mode="approve"' in argv
    tools = offered_tools(result)
    ours = {t.removeprefix("mcp__omb/") for t in tools if t.startswith("mcp__omb/")}
    assert AGENTS_TOOLS | {"query_result", "fault__records"} <= ours
    assert not any(n.startswith("notes__") for n in ours)  # not mounted a second time
    assert "mcp__notes/search_notes" in tools  # the user's own, run by Codex itself
    assert not {"find_tool", "use_tool"} & ours
    bots, records = tool_results(result, "responses")
    assert "iris" in bots.text
    assert_shaped(records.text)
    assert fault_calls(record) == ["records"]


# -- pi ------------------------------------------------------------------------------------


def pi_spec(tmp_path: Path, pi: str, settings: dict[str, Any], steps: list[dict[str, Any]],
            secrets: list[str], http_tools: int = 0) -> dict[str, Any]:
    api_key = canary()
    agent_dir = tmp_path / "pi-agent"
    models = {"providers": {"fake": {"baseUrl": "{base_url}/v1", "api": "openai-completions", "apiKey": "FAKE_PI_KEY",
                                     "models": [{"id": "fake-model"}]}}}
    env = {**base_env(tmp_path / "home"), "PI_CODING_AGENT_DIR": str(agent_dir), "PI_OFFLINE": "1",
           "FAKE_PI_KEY": api_key}
    return {
        "shim": "pi", "dialect": "chat", "script": {"steps": steps}, "settings": settings,
        "options": {"executable": pi},
        "args": ["--provider", "fake", "--model", "fake-model", "--no-session", "--no-builtin-tools",
                 "--mode", "json", "-p", "use the tools"],
        "env": env, "files": {str(agent_dir / "models.json"): json.dumps(models)},
        "canaries": [*secrets, api_key], "timeout": 120, "http_tools": http_tools,
    }


def test_pi_extension_full_for_command_servers(turn: Turn, engine_path: Callable[[str], str], tmp_path: Path) -> None:
    secret, record = canary(), tmp_path / "fault.jsonl"
    settings = {"bot": {"id": "pia"}, "mcpServers": {
        "agents": agents_entry(), "fault": fault_entry(f"record={record}", env={"FAULT_TOKEN": secret})}}
    steps = [{"name": "agents__list_bots"}, {"name": "fault__records", "arguments": {"count": RECORDS}}]
    result = turn(pi_spec(tmp_path, engine_path("pi"), settings, steps, [secret]))
    assert_clean(result)
    argv = result["launch"]["argv"]
    assert argv[1:3] == ["-ne", "-e"] and argv[3].endswith("shims/pi/omb-sidecar.ts")
    tools = set(offered_tools(result))
    assert AGENTS_TOOLS | {"query_result", "fault__records", "fault__echo"} <= tools
    assert not {"find_tool", "use_tool"} & tools
    bots, records = tool_results(result, "chat")
    assert "iris" in bots.text
    assert_shaped(records.text)
    assert fault_calls(record) == ["records"]


def test_pi_big_url_server_as_trio(turn: Turn, engine_path: Callable[[str], str], tmp_path: Path) -> None:
    secret = canary()
    settings = {"bot": {"id": "pia"}, "mcpServers": {
        "fault": fault_entry(),
        "big": {"type": "http", "url": "{http_url}", "headers": {"Authorization": f"Bearer {secret}"}},
    }}
    steps = [
        {"name": "big__search_tools", "arguments": {"query": "billing records"}},
        {"name": "big__call_tool", "arguments": {"name": "big__billing_op_1", "arguments": {"record_id": "r-7"}}},
    ]
    result = turn(pi_spec(tmp_path, engine_path("pi"), settings, steps, [secret], http_tools=45))
    assert_clean(result)
    tools = set(offered_tools(result))
    # SPEC §4: a URL upstream with more than 40 tools is listed to pi as its trio; the
    # small command upstream is listed whole.
    assert {"big__search_tools", "big__describe_tool", "big__call_tool"} <= tools
    assert not any(t.startswith("big__") and t.endswith(tuple(f"_op_{i}" for i in range(45))) for t in tools)
    assert {"fault__echo", "fault__records"} <= tools
    searched, called = tool_results(result, "chat")
    assert "billing_op_1" in searched.text
    assert json.loads(called.text) == {"ran": "billing_op_1", "arguments": {"record_id": "r-7"}}
    assert result["http_calls"] == [{"name": "billing_op_1", "arguments": {"record_id": "r-7"}}]


# -- a slow upstream is waited for, not silently lost ----------------------------------------


SLOW_START = 3  # seconds: past Claude Code's ~2 s default wait in -p mode, and Codex's under-1-second one


def test_claude_waits_for_a_slow_upstream(turn: Turn, engine_path: Callable[[str], str], tmp_path: Path) -> None:
    secret, folder = canary(), tmp_path / "work"
    folder.mkdir()
    settings = {"bot": {"id": "otto"}, "mcpServers": {
        "agents": agents_entry(), "slow": fault_entry(f"init-delay={SLOW_START}", env={"SLOW_TOKEN": secret})}}
    steps = [{"name": "slow__echo", "arguments": {"nonce": "late-but-there"}}]
    spec = claude_spec(tmp_path, engine_path("claude"), settings, steps, secret, folder,
                       ("--allowedTools", "mcp__omb__slow__echo"))
    result = turn(spec)
    assert_clean(result)
    assert "mcp__omb__slow__echo" in offered_tools(result)
    (echo,) = tool_results(result, "anthropic")
    assert "late-but-there" in echo.text


def test_codex_waits_for_a_slow_upstream(turn: Turn, engine_path: Callable[[str], str], tmp_path: Path) -> None:
    secret, api_key = canary(), canary()
    settings = {"bot": {"id": "cody"}, "mcpServers": {
        "agents": agents_entry(), "slow": fault_entry(f"init-delay={SLOW_START}", env={"SLOW_TOKEN": secret})}}
    (tmp_path / "codex-home").mkdir()
    env = {**base_env(tmp_path / "home"), "CODEX_HOME": str(tmp_path / "codex-home"), "FAKE_KEY": api_key}
    args = [
        "exec", "--skip-git-repo-check", "--ephemeral", "-s", "read-only", "--json",
        "-c", 'model_providers.fake={name="Fake", base_url="{base_url}/v1", env_key="FAKE_KEY", wire_api="responses"}',
        "-c", "model_provider=fake", "-m", "fake-model", "-c", "analytics.enabled=false",
        "-c", "check_for_update_on_startup=false", "--disable", "plugins", "--disable", "remote_plugin", "go",
    ]
    spec = {
        "shim": "codex", "dialect": "responses", "settings": settings, "args": args, "env": env,
        "script": {"steps": [{"name": "slow__echo", "arguments": {"nonce": "late-but-there"}}]},
        "options": {"executable": engine_path("codex"), "approved_servers": ["slow"]},
        "canaries": [secret, api_key], "timeout": 120,
    }
    result = turn(spec)
    assert_clean(result)
    assert "mcp__omb/slow__echo" in offered_tools(result)
    (echo,) = tool_results(result, "responses")
    assert "late-but-there" in echo.text
