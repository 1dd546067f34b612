"""The Claude Code shim's launch, without the engine: files, argv, environment, the
pre-allowed tools (asked of a real sidecar on the bundled example servers), the CLI's
version read once, and the command line of `python -m shims.claude`."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shims.claude import ClaudeOptions, parse_version, prepare_claude
from shims.claude.version import forget_versions
from shims.launch import Launch

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "sidecar" / "examples"
AGENTS = {"agents__list_bots", "agents__post_to_room", "agents__read_room"}


@pytest.fixture
def fake_claude(tmp_path: Path) -> Path:
    """A `claude` that only knows --version, and counts how often it was asked."""
    script = tmp_path / "bin" / "claude"
    script.parent.mkdir()
    script.write_text(f'#!/bin/sh\necho asked >> "{tmp_path}/asked"\necho "${{FAKE_CLAUDE_VERSION:-2.1.197}} (Claude Code)"\n')
    script.chmod(0o755)
    forget_versions()
    return script


@pytest.fixture
def secret() -> str:
    return f"CANARY{uuid.uuid4().hex}"


def settings_for(secret: str, bridge: bool = False, **bot: Any) -> dict[str, Any]:
    return {
        "bot": {"id": "otto", **bot},
        "features": {"agentsToolBridge": bridge},
        "mcpServers": {
            "agents": {"command": sys.executable, "args": [str(EXAMPLES / "agents.py")], "builtin": True,
                       "alwaysListed": ["list_bots"]},
            "notes": {"command": sys.executable, "args": [str(EXAMPLES / "notes.py")], "env": {"NOTES_TOKEN": secret}},
        },
    }


@pytest.fixture
def launches() -> Iterator[list[Launch]]:
    made: list[Launch] = []
    yield made
    for launch in made:
        launch.cleanup()


def prepare(launches: list[Launch], settings: dict[str, Any], tmp_path: Path, fake: Path, **options: Any) -> Launch:
    (tmp_path / "turn").mkdir(exist_ok=True)
    (tmp_path / "machine").mkdir(exist_ok=True)
    base = {"executable": str(fake), "folder": str(tmp_path / "turn"), "managed_root": tmp_path / "machine",
            "platform": "linux", "environ": {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}, "list_wait_seconds": 10.0}
    launch = prepare_claude(settings, ClaudeOptions(**{**base, **options}))
    launches.append(launch)
    return launch


def allowed(launch: Launch) -> set[str]:
    return set(launch.argv[launch.argv.index("--allowedTools") + 1].split(","))


def test_files_are_private_and_secrets_stay_in_the_sidecar_config(
    launches: list[Launch], tmp_path: Path, fake_claude: Path, secret: str
) -> None:
    launch = prepare(launches, settings_for(secret), tmp_path, fake_claude, args=["-p", "hello"])
    assert stat.S_IMODE(launch.folder.stat().st_mode) == 0o700
    files = {p.name: stat.S_IMODE(p.stat().st_mode) for p in launch.folder.iterdir()}
    assert files == {"sidecar.json": 0o600, "mcp.json": 0o600}  # the probe's config is gone
    assert secret in (launch.folder / "sidecar.json").read_text()
    assert secret not in (launch.folder / "mcp.json").read_text()
    assert not any(secret in arg for arg in launch.argv)
    assert not any(secret in value for value in launch.env.values())
    registration = json.loads((launch.folder / "mcp.json").read_text())["mcpServers"]["omb"]
    assert registration["args"][-2:] == ["--config", str(launch.folder / "sidecar.json")]
    assert registration["env"] == {"OMB_AGENTS_TOOL_BRIDGE": "0"}


def test_argv_registers_the_sidecar_strictly_and_preallows_only_builtin_tools(
    launches: list[Launch], tmp_path: Path, fake_claude: Path, secret: str
) -> None:
    launch = prepare(launches, settings_for(secret), tmp_path, fake_claude, args=["-p", "hello"],
                     tools=["Read", "Bash(git *)"], disallowed_tools=["WebFetch"])
    argv = launch.argv
    assert argv[0] == str(fake_claude) and argv[-2:] == ["-p", "hello"]
    assert argv[argv.index("--mcp-config") + 1] == str(launch.folder / "mcp.json")
    assert "--strict-mcp-config" in argv and argv[argv.index("--setting-sources") + 1] == "project"
    assert allowed(launch) == {f"mcp__omb__{n}" for n in (*AGENTS, "query_result")}  # notes is the person's
    assert argv[argv.index("--tools") + 1] == "Read,Bash(git *)"
    assert argv[argv.index("--disallowedTools") + 1] == "WebFetch"
    assert launch.env["MCP_CONNECTION_NONBLOCKING"] == "0" and int(launch.env["MCP_TIMEOUT"]) >= 10_000
    config = json.loads(launch.sidecar_config.read_text()) if launch.sidecar_config else {}
    assert config["bot"]["engine"] == "claude"
    assert config["face"] == {"name": "omb", "layout": "full", "listWaitSeconds": 10.0}
    assert config["features"] == {"agentsToolBridge": False}


def test_bridged_turn_preallows_find_tool_and_use_tool(
    launches: list[Launch], tmp_path: Path, fake_claude: Path, secret: str
) -> None:
    launch = prepare(launches, settings_for(secret, bridge=True), tmp_path, fake_claude)
    assert launch.extra["bridge"].bridged is True
    assert {"mcp__omb__find_tool", "mcp__omb__use_tool"} <= allowed(launch)
    assert not any("notes" in name for name in allowed(launch))
    config = json.loads((launch.folder / "sidecar.json").read_text())
    assert config["face"]["layout"] == "bridged" and config["features"]["agentsToolBridge"] is True
    assert json.loads((launch.folder / "mcp.json").read_text())["mcpServers"]["omb"]["env"]["OMB_AGENTS_TOOL_BRIDGE"] == "1"


def test_a_refused_turn_overrides_a_bridge_variable_in_the_environment(
    launches: list[Launch], tmp_path: Path, fake_claude: Path, secret: str
) -> None:
    environ = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "OMB_AGENTS_TOOL_BRIDGE": "1"}
    launch = prepare(launches, settings_for(secret, selection={"servers": ["agents"]}), tmp_path, fake_claude,
                     environ=environ)
    assert launch.extra["bridge"].bridged is False
    assert not {"mcp__omb__find_tool", "mcp__omb__use_tool"} & allowed(launch)
    registration = json.loads((launch.folder / "mcp.json").read_text())["mcpServers"]["omb"]
    assert registration["env"]["OMB_AGENTS_TOOL_BRIDGE"] == "0"  # the sidecar's variable wins over the engine's
    assert json.loads((launch.folder / "sidecar.json").read_text())["face"]["layout"] == "full"


def test_a_builtin_server_that_lists_nothing_in_time_refuses_the_bridge(
    launches: list[Launch], tmp_path: Path, fake_claude: Path, secret: str
) -> None:
    settings = settings_for(secret, bridge=True)
    settings["mcpServers"]["broken"] = {"command": sys.executable, "args": ["-c", "import sys; sys.exit(3)"], "builtin": True}
    launch = prepare(launches, settings, tmp_path, fake_claude, list_wait_seconds=3.0)
    assert launch.extra["bridge"].bridged is False
    assert "not known" in launch.notes[-1]
    assert allowed(launch) == {f"mcp__omb__{n}" for n in (*AGENTS, "query_result")}


def test_inheriting_the_users_setup_leaves_strictness_out(
    launches: list[Launch], tmp_path: Path, fake_claude: Path, secret: str
) -> None:
    launch = prepare(launches, settings_for(secret, bridge=True), tmp_path, fake_claude, inherit_user_config=True)
    assert "--strict-mcp-config" not in launch.argv and "--setting-sources" not in launch.argv
    assert launch.extra["bridge"].bridged is False


def test_an_old_cli_gets_no_setting_sources_and_no_bridge(
    launches: list[Launch], tmp_path: Path, fake_claude: Path, secret: str
) -> None:
    environ = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "FAKE_CLAUDE_VERSION": "1.0.121"}
    launch = prepare(launches, settings_for(secret, bridge=True), tmp_path, fake_claude, environ=environ)
    assert "--setting-sources" not in launch.argv and "--strict-mcp-config" in launch.argv
    assert launch.extra["cli_version"] == (1, 0, 121) and launch.extra["bridge"].bridged is False


def test_the_cli_version_is_read_once_and_remembered(
    launches: list[Launch], tmp_path: Path, fake_claude: Path, secret: str
) -> None:
    for _ in range(3):
        prepare(launches, settings_for(secret), tmp_path, fake_claude)
    assert (tmp_path / "asked").read_text().count("asked") == 1


def test_a_missing_cli_has_an_unknown_version(launches: list[Launch], tmp_path: Path, secret: str) -> None:
    forget_versions()
    launch = prepare(launches, settings_for(secret, bridge=True), tmp_path, tmp_path / "no-such-claude")
    assert launch.extra["cli_version"] is None and "--setting-sources" not in launch.argv
    assert "not known" in launch.extra["bridge"].reason


@pytest.mark.parametrize(("text", "version"), [("2.1.197 (Claude Code)", (2, 1, 197)), ("claude 1.0.122", (1, 0, 122)),
                                               ("no version here", None)])
def test_parse_version(text: str, version: tuple[int, int, int] | None) -> None:
    assert parse_version(text) == version


def test_a_bad_face_name_is_refused(tmp_path: Path, fake_claude: Path, secret: str) -> None:
    settings = {**settings_for(secret), "face": {"name": "my server"}}
    with pytest.raises(ValueError, match="face.name"):
        prepare_claude(settings, ClaudeOptions(executable=str(fake_claude), temp_parent=str(tmp_path)))
    assert list(tmp_path.glob("omb-claude-*")) == []


def test_the_command_line_dry_run(tmp_path: Path, fake_claude: Path, secret: str) -> None:
    settings_file = tmp_path / "bot.json"
    settings_file.write_text(json.dumps(settings_for(secret)))
    done = subprocess.run(
        [sys.executable, "-m", "shims.claude", "--settings", str(settings_file), "--claude", str(fake_claude),
         "--folder", str(tmp_path), "--dry-run", "--", "-p", "hi"],
        capture_output=True, text=True, cwd=REPO, timeout=60, env={**os.environ, "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    described = json.loads(done.stdout)
    assert described["argv"][-2:] == ["-p", "hi"] and "--strict-mcp-config" in described["argv"]
    assert "MCP_CONNECTION_NONBLOCKING" in described["env_names"]
    assert secret not in done.stdout + done.stderr
    assert not Path(described["sidecar_config"]).exists()  # a dry run leaves nothing behind
