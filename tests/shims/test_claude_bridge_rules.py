"""The Claude Code bridge decision (SPEC §6, seed 000 "Claude Code"): one test per rule,
each flipping a turn that would be bridged to one that is not (or showing what does not
count). The base turn passes every rule: switch on, no selection, own setup only, CLI
2.1.197, no tool lists, an empty turn folder, no managed policy."""

from __future__ import annotations

import json
import logging
import os
import socket
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from shims.claude import BridgeTurn, bridge_switch, claude_bridge, has_tool_wildcard, names_server
from shims.claude import settings as settings_module
from shims.claude.launch import ClaudeOptions, decide


@pytest.fixture
def base(tmp_path: Path) -> BridgeTurn:
    folder, machine = tmp_path / "turn", tmp_path / "machine"
    folder.mkdir()
    machine.mkdir()
    return BridgeTurn(switch_on=True, server="omb", folder=folder, cli_version=(2, 1, 197),
                      platform="linux", managed_root=machine)


def project_file(turn: BridgeTurn, content: Any, name: str = "settings.json") -> Path:
    path = turn.folder / ".claude" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def managed_file(turn: BridgeTurn, content: Any, folder: str = "etc/claude-code", name: str = "managed-settings.json") -> Path:
    assert turn.managed_root is not None
    path = turn.managed_root / folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def refused(turn: BridgeTurn, *words: str) -> None:
    decision = claude_bridge(turn)
    assert decision.bridged is False
    for word in words:
        assert word in decision.reason, decision.reason


def test_the_base_turn_is_bridged(base: BridgeTurn) -> None:
    assert claude_bridge(base).bridged is True


# -- the switch, the bot, the CLI ----------------------------------------------------------


def test_switch_off_is_not_bridged(base: BridgeTurn) -> None:
    refused(replace(base, switch_on=False), "switch is off")


@pytest.mark.parametrize(
    ("settings", "environ", "on"),
    [
        ({}, {}, False),
        ({"features": {"agentsToolBridge": True}}, {}, True),
        ({"features": {"agentsToolBridge": True}}, {"OMB_AGENTS_TOOL_BRIDGE": "0"}, False),
        ({}, {"OMB_AGENTS_TOOL_BRIDGE": "1"}, True),
        ({}, {"OMB_AGENTS_TOOL_BRIDGE": "yes"}, False),  # only exactly 1 or 0 counts
        ({"bot": {"modelUrl": "http://127.0.0.1:11434/v1"}}, {}, True),
        ({"bot": {"modelUrl": "http://192.168.1.20:8000/v1"}}, {}, True),
        ({"bot": {"modelUrl": "http://gpu-box.local:8000"}}, {}, True),
        ({"bot": {"modelUrl": "https://api.anthropic.com"}}, {}, False),
        ({"bot": {"modelUrl": "http://localhost:1234"}}, {"OMB_AGENTS_TOOL_BRIDGE": "0"}, False),
    ],
)
def test_the_switch(settings: dict[str, Any], environ: dict[str, str], on: bool) -> None:
    assert bridge_switch(settings, environ) is on


def test_a_tool_selection_is_never_bridged(base: BridgeTurn) -> None:
    refused(replace(base, has_selection=True), "selection")


def test_inheriting_the_machines_claude_setup_is_not_bridged(base: BridgeTurn) -> None:
    refused(replace(base, inherits_user_config=True), "inherits")


def test_the_inherit_variable_counts_like_the_option(base: BridgeTurn) -> None:
    settings = {"features": {"agentsToolBridge": True}}
    options = ClaudeOptions(folder=str(base.folder), managed_root=base.managed_root, platform="linux")
    assert decide(settings, options, {}, (2, 1, 197)).bridged is True
    assert decide(settings, options, {"OMB_CLAUDE_INHERIT_USER_CONFIG": "1"}, (2, 1, 197)).bridged is False
    assert decide(settings, replace(options, inherit_user_config=True), {}, (2, 1, 197)).bridged is False
    with_selection = {**settings, "bot": {"selection": {"servers": ["agents"]}}}
    assert decide(with_selection, options, {}, (2, 1, 197)).bridged is False


def test_an_unknown_cli_version_counts_as_too_old(base: BridgeTurn) -> None:
    refused(replace(base, cli_version=None), "not known")


def test_a_cli_older_than_1_0_122_is_not_bridged(base: BridgeTurn) -> None:
    refused(replace(base, cli_version=(1, 0, 121)), "older than 1.0.122")
    assert claude_bridge(replace(base, cli_version=(1, 0, 122))).bridged is True


# -- tools / disallowedTools -------------------------------------------------------------------


@pytest.mark.parametrize("field", ["tools", "disallowed_tools"])
@pytest.mark.parametrize(
    "entry",
    ["mcp__omb__agents__list_bots", "MCP__OMB", "mcp__omb2__x", "mcp__*__list_bots", "mcp__?mb", "*exec*",
     "mcp__a*__vm_exec", "Bash(a),*", "Read?"],
)
def test_a_tool_list_entry_naming_the_server_or_with_a_wildcard_refuses(base: BridgeTurn, field: str, entry: str) -> None:
    refused(replace(base, **{field: ("Read", entry)}))


@pytest.mark.parametrize("entry", ["Bash(git *)", "Read(./src/**)", "mcp__github__create_issue", "WebFetch(domain:*.example.com)"])
def test_tool_list_entries_without_a_wildcard_in_a_tool_name_pass(base: BridgeTurn, entry: str) -> None:
    assert claude_bridge(replace(base, tools=(entry,), disallowed_tools=(entry,))).bridged is True


def test_the_wildcard_test_is_one_flag_set_at_open_and_cleared_at_close() -> None:
    assert not has_tool_wildcard("Bash(git *)")
    assert has_tool_wildcard("Bash(a)*")
    assert has_tool_wildcard("Bash((a)*)")  # one flag, not a depth: the first `)` clears it
    assert not has_tool_wildcard("Bash(a(*)")  # a second `(` changes nothing
    assert names_server("x mcp__OmB__y", "omb") and not names_server("mcp__other", "omb")


# -- project settings files ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["settings.json", "settings.local.json"])
def test_a_project_file_naming_the_server_refuses(base: BridgeTurn, name: str) -> None:
    project_file(base, {"permissions": {"allow": ["mcp__omb__agents__list_bots"]}}, name)
    refused(base, name, "names the omb server")


def test_a_json_escaped_spelling_of_the_server_is_seen(base: BridgeTurn) -> None:
    path = project_file(base, '{"permissions": {"allow": ["mcp\\u005f_omb__x"]}}')
    assert "mcp__omb" not in path.read_text()
    refused(base, "names the omb server")


def test_a_key_naming_the_server_is_seen(base: BridgeTurn) -> None:
    project_file(base, {"env": {"MCP__OMB_THING": "1"}})
    refused(base, "names the omb server")


def test_a_server_wildcard_in_a_file_refuses(base: BridgeTurn) -> None:
    project_file(base, {"permissions": {"allow": ["mcp__*"]}})
    refused(base, "names the omb server")


def test_another_servers_exact_rules_pass(base: BridgeTurn) -> None:
    project_file(base, {"permissions": {"allow": ["mcp__github__*"], "deny": ["mcp__github__delete_repo"]}})
    assert claude_bridge(base).bridged is True


@pytest.mark.parametrize(
    "hooks",
    [
        {"PreToolUse": [{"matcher": "Bash", "hooks": []}]},
        {"pretooluse": []},
        {"PermissionRequest": {}},
        {"PERMISSIONREQUEST": "anything but null"},
    ],
)
def test_a_pre_tool_use_or_permission_request_hook_refuses(base: BridgeTurn, hooks: dict[str, Any]) -> None:
    project_file(base, {"hooks": hooks})
    refused(base, "hook")


def test_the_hooks_key_is_compared_without_case_and_escapes_are_seen(base: BridgeTurn) -> None:
    project_file(base, '{"HoOkS": {"Pre\\u0054oolUse": []}}')
    refused(base, "hook")


@pytest.mark.parametrize("hooks", [{"PreToolUse": None}, {"PostToolUse": [{"hooks": []}], "Stop": []}, {}])
def test_other_hooks_or_a_null_one_pass(base: BridgeTurn, hooks: dict[str, Any]) -> None:
    project_file(base, {"hooks": hooks})
    assert claude_bridge(base).bridged is True


def test_a_key_given_twice_is_seen_both_times(base: BridgeTurn) -> None:
    project_file(base, '{"hooks": {"PreToolUse": []}, "hooks": {}}')
    refused(base, "hook")


@pytest.mark.parametrize(("kind", "rule"), [("deny", "mcp__github__*"), ("ask", "*exec*"), ("deny", "Bash(a),*")])
def test_a_deny_or_ask_rule_with_a_wildcard_in_a_tool_name_refuses(base: BridgeTurn, kind: str, rule: str) -> None:
    project_file(base, {"Permissions": {kind.upper(): ["Read", rule]}})
    refused(base, "wildcard")


def test_allow_rules_and_argument_patterns_do_not_count(base: BridgeTurn) -> None:
    project_file(base, {"permissions": {"allow": ["*exec*", "mcp__github__*"], "deny": ["Bash(rm *)", "Read(./secrets/**)"]}})
    assert claude_bridge(base).bridged is True


# -- files that cannot be read as settings --------------------------------------------------------


def test_a_folder_where_the_file_should_be_refuses(base: BridgeTurn) -> None:
    (base.folder / ".claude" / "settings.json").mkdir(parents=True)
    refused(base, "not a regular file")


def test_a_fifo_is_refused_without_being_opened(base: BridgeTurn, monkeypatch: pytest.MonkeyPatch) -> None:
    path = base.folder / ".claude" / "settings.local.json"
    path.parent.mkdir()
    os.mkfifo(path)
    opened: list[str] = []
    real_open = os.open
    monkeypatch.setattr(settings_module.os, "open", lambda p, *a, **k: opened.append(str(p)) or real_open(p, *a, **k))
    refused(base, "not a regular file")
    assert str(path) not in opened


def test_a_socket_is_refused(base: BridgeTurn) -> None:
    path = base.folder / ".claude" / "settings.json"
    path.parent.mkdir()
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        refused(base, "not a regular file")


def test_a_file_over_1_mb_is_refused_without_being_read(base: BridgeTurn, monkeypatch: pytest.MonkeyPatch) -> None:
    path = project_file(base, "{}")
    path.write_text('{"a": "' + "x" * (1024 * 1024) + '"}')
    monkeypatch.setattr(settings_module.os, "open", lambda *a, **k: pytest.fail("opened a file over the limit"))
    refused(base, "larger than 1 MB")


@pytest.mark.parametrize("text", ["not json", "{'single': 1}", '{"a": NaN}', "[1, 2]", '"text"', '{"hooks": []}',
                                  '{"hooks": null}', "\ufeff{}"])
def test_a_file_that_is_not_settings_json_refuses(base: BridgeTurn, text: str) -> None:
    project_file(base, text)
    refused(base, "cannot be read as settings")


def test_a_link_to_nothing_refuses(base: BridgeTurn) -> None:
    path = base.folder / ".claude" / "settings.json"
    path.parent.mkdir()
    path.symlink_to(base.folder / "missing.json")
    refused(base, "cannot be read as settings")


def test_the_home_folder_is_read_when_the_turn_has_none(base: BridgeTurn) -> None:
    home = base.folder
    project_file(base, {"hooks": {"PreToolUse": []}})
    options = ClaudeOptions(managed_root=base.managed_root, platform="linux")
    assert decide({"features": {"agentsToolBridge": True}}, options, {"HOME": str(home)}, (2, 1, 197)).bridged is False


# -- the managed policy ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("platform", "folder"),
    [
        ("linux", "etc/claude-code"),
        ("darwin", "Library/Application Support/ClaudeCode"),
        ("win32", "C:/Program Files/ClaudeCode"),
        ("win32", "C:/ProgramData/ClaudeCode"),
    ],
)
def test_each_platforms_managed_policy_is_read(base: BridgeTurn, platform: str, folder: str) -> None:
    managed_file(base, {"hooks": {"PreToolUse": []}}, folder)
    refused(replace(base, platform=platform), "managed-settings.json", "hook")
    other = "darwin" if platform != "darwin" else "linux"
    assert claude_bridge(replace(base, platform=other)).bridged is True  # another platform's file is not read


@pytest.mark.parametrize("value", [True, "yes", 0, {}])
def test_allow_managed_permission_rules_only_refuses(base: BridgeTurn, value: Any) -> None:
    managed_file(base, {"AllowManagedPermissionRulesOnly": value})
    refused(base, "AllowManagedPermissionRulesOnly")


@pytest.mark.parametrize("value", [False, None])
def test_allow_managed_permission_rules_only_false_or_null_passes(base: BridgeTurn, value: Any) -> None:
    managed_file(base, {"allowManagedPermissionRulesOnly": value})
    assert claude_bridge(base).bridged is True


def test_allow_managed_permission_rules_only_counts_only_in_managed_files(base: BridgeTurn) -> None:
    project_file(base, {"allowManagedPermissionRulesOnly": True})
    assert claude_bridge(base).bridged is True


def test_a_drop_in_beside_the_managed_file_is_read(base: BridgeTurn) -> None:
    managed_file(base, {}, "etc/claude-code")
    managed_file(base, {"permissions": {"deny": ["mcp__OMB__agents__post_to_room"]}}, "etc/claude-code/managed-settings.d",
                 "50-team.json")
    refused(base, "50-team.json", "names the omb server")


def test_drop_ins_are_read_without_the_managed_file_and_only_json_ones(base: BridgeTurn) -> None:
    managed_file(base, "mcp__omb everywhere", "etc/claude-code/managed-settings.d", "README.txt")
    assert claude_bridge(base).bridged is True
    managed_file(base, {"hooks": {"permissionRequest": []}}, "etc/claude-code/managed-settings.d", "10-a.JSON")
    refused(base, "10-a.JSON", "hook")


def test_a_drop_in_that_is_not_a_regular_file_refuses(base: BridgeTurn) -> None:
    assert base.managed_root is not None
    (base.managed_root / "etc/claude-code/managed-settings.d/20-dir.json").mkdir(parents=True)
    refused(base, "not a regular file")


def test_a_drop_in_folder_that_is_a_file_refuses(base: BridgeTurn) -> None:
    managed_file(base, "{}", "etc/claude-code", "managed-settings.d")
    refused(base, "not a folder")


# -- failure while deciding ---------------------------------------------------------------------------


def test_a_failure_while_deciding_is_unbridged_with_one_line_naming_the_kind(
    base: BridgeTurn, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(folder: Path) -> list[Path]:
        raise RuntimeError("/secret/path/that/must/not/be/logged")

    monkeypatch.setattr("shims.claude.refusal.project_settings", broken)
    with caplog.at_level(logging.WARNING, logger="shims.claude.refusal"):
        decision = claude_bridge(base)
    assert decision.bridged is False and "RuntimeError" in decision.reason
    assert len(caplog.records) == 1
    assert "RuntimeError" in caplog.text and "/secret/path" not in caplog.text + decision.reason
