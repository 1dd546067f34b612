"""The Codex shim's launch, without the engine: the `-c` overrides (variable names only on
argv, `required`, approval by tool kind), never bridged, and the de-duplication against
the user's own `config.toml`."""

from __future__ import annotations

import json
import os
import stat
import sys
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shims.codex import CodexOptions, drop_running, prepare_codex, running_signatures, toml_value, user_config_path
from shims.launch import Launch

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "sidecar" / "examples"


def agents() -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(EXAMPLES / "agents.py")], "builtin": True}


def notes(secret: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(EXAMPLES / "notes.py")], "env": {"NOTES_TOKEN": secret}}


@pytest.fixture
def secret() -> str:
    return f"CANARY{uuid.uuid4().hex}"


@pytest.fixture
def launches() -> Iterator[list[Launch]]:
    made: list[Launch] = []
    yield made
    for launch in made:
        launch.cleanup()


def overrides(launch: Launch) -> dict[str, Any]:
    """The `-c` overrides as parsed TOML values, by key."""
    found: dict[str, Any] = {}
    for flag, value in zip(launch.argv, launch.argv[1:]):
        if flag == "-c":
            key, text = value.split("=", 1)
            found[key] = tomllib.loads(f"v = {text}")["v"]
    return found


def prepare(launches: list[Launch], settings: dict[str, Any], tmp_path: Path, **options: Any) -> Launch:
    environ = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "CODEX_HOME": str(tmp_path / "codex-home"),
               **options.pop("environ", {})}
    launch = prepare_codex(settings, CodexOptions(environ=environ, args=["exec", "hi"], **options))
    launches.append(launch)
    return launch


def test_overrides_register_the_sidecar_with_names_only(launches: list[Launch], tmp_path: Path, secret: str) -> None:
    settings = {"bot": {"id": "cody"}, "mcpServers": {"agents": agents(), "notes": notes(secret)}}
    launch = prepare(launches, settings, tmp_path, environ={"OMB_MCP_RESULT_BUDGET": "4000", "UNRELATED": "x"})
    found = overrides(launch)
    assert found["mcp_servers.omb.args"][-2:] == ["--config", str(launch.folder / "sidecar.json")]
    assert found["mcp_servers.omb.env_vars"] == ["OMB_MCP_RESULT_BUDGET"]
    assert found["mcp_servers.omb.required"] is True
    assert found["mcp_servers.omb.startup_timeout_sec"] >= 10
    approved = {k.split(".")[3] for k, v in found.items() if k.endswith(".approval_mode") and v == "approve"}
    assert approved == {"agents__list_bots", "agents__post_to_room", "agents__read_room", "query_result"}
    assert launch.argv[-2:] == ["exec", "hi"]
    assert not any(secret in arg for arg in launch.argv) and "4000" not in " ".join(launch.argv)
    assert stat.S_IMODE((launch.folder / "sidecar.json").stat().st_mode) == 0o600
    config = json.loads((launch.folder / "sidecar.json").read_text())
    assert config["bot"]["engine"] == "codex" and config["features"]["agentsToolBridge"] is False
    assert config["face"]["listWaitSeconds"] == 10.0


def test_servers_the_person_approved_are_approved_too(launches: list[Launch], tmp_path: Path, secret: str) -> None:
    settings = {"bot": {"id": "cody"}, "mcpServers": {"agents": agents(), "notes": notes(secret)}}
    launch = prepare(launches, settings, tmp_path, approved_servers=["notes"])
    approved = {k.split(".")[3] for k in overrides(launch) if k.endswith(".approval_mode")}
    assert {"notes__search_notes", "notes__add_note"} <= approved


def test_never_bridged_whatever_the_switch(launches: list[Launch], tmp_path: Path, secret: str) -> None:
    settings = {"bot": {"id": "cody", "modelUrl": "http://127.0.0.1:1/v1"}, "features": {"agentsToolBridge": True},
                "mcpServers": {"agents": agents()}}
    launch = prepare(launches, settings, tmp_path, environ={"OMB_AGENTS_TOOL_BRIDGE": "1"}, signin="chatgpt")
    config = json.loads((launch.folder / "sidecar.json").read_text())
    assert config["features"]["agentsToolBridge"] is False and config["bot"]["engine"] == "codex-chatgpt"
    assert "OMB_AGENTS_TOOL_BRIDGE" not in overrides(launch).get("mcp_servers.omb.env_vars", [])
    assert not any("find_tool" in arg or "use_tool" in arg for arg in launch.argv)


def test_toml_values_survive_quotes_and_backslashes() -> None:
    value = 'C:\\path with "quotes"\n'
    assert tomllib.loads(f"v = {toml_value(value)}")["v"] == value
    assert tomllib.loads(f"v = {toml_value(['a', 'b'])}")["v"] == ["a", "b"]


# -- de-duplication ------------------------------------------------------------------------------


def write_user_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "codex-home" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def command_table(name: str, entry: dict[str, Any], extra: str = "") -> str:
    env = ", ".join(f"{k} = {json.dumps(v)}" for k, v in entry.get("env", {}).items())
    return (f"[mcp_servers.{name}]\ncommand = {json.dumps(entry['command'])}\nargs = {json.dumps(entry['args'])}\n"
            f"env = {{ {env} }}\n{extra}")


def test_a_server_the_user_already_runs_is_not_mounted_twice(launches: list[Launch], tmp_path: Path, secret: str) -> None:
    write_user_config(tmp_path, command_table("my_notes", notes(secret)))
    settings = {"bot": {"id": "cody"}, "mcpServers": {"agents": agents(), "notes": notes(secret)}}
    launch = prepare(launches, settings, tmp_path)
    assert launch.extra["dropped"] == ["notes"]
    assert set(json.loads((launch.folder / "sidecar.json").read_text())["mcpServers"]) == {"agents"}


@pytest.mark.parametrize(
    ("user", "dropped"),
    [
        ("same", True),
        ("other-env", False),
        ("other-args", False),
        ("disabled", False),
        ("env-var", True),  # the user's file names the variable; its value matches ours
    ],
)
def test_what_counts_as_the_same_command_server(tmp_path: Path, secret: str, user: str, dropped: bool) -> None:
    ours = notes(secret)
    theirs = dict(ours)
    extra = ""
    if user == "other-env":
        theirs = {**ours, "env": {"NOTES_TOKEN": "other"}}
    elif user == "other-args":
        theirs = {**ours, "args": [*ours["args"], "--verbose"]}
    elif user == "disabled":
        extra = "enabled = false\n"
    elif user == "env-var":
        theirs = {**ours, "env": {}}
        extra = 'env_vars = ["NOTES_TOKEN"]\n'
    path = write_user_config(tmp_path, command_table("n", theirs, extra))
    running = running_signatures(path, {"NOTES_TOKEN": secret})
    kept, gone = drop_running({"notes": ours}, running, has_selection=False)
    assert (gone == ["notes"]) is dropped and (kept == {}) is dropped


def test_address_servers_match_on_address_and_headers(tmp_path: Path, secret: str) -> None:
    path = write_user_config(tmp_path, (
        '[mcp_servers.docs]\nurl = "https://mcp.example.com/mcp/"\nbearer_token_env_var = "DOCS_TOKEN"\n'
        '[mcp_servers.wiki]\nurl = "https://wiki.example.com/mcp"\nhttp_headers = { "X-Team" = "a" }\n'
    ))
    running = running_signatures(path, {"DOCS_TOKEN": secret})
    ours = {
        "docs": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"authorization": f"Bearer {secret}"}},
        "wiki": {"type": "http", "url": "https://wiki.example.com/mcp", "headers": {"X-Team": "b"}},
    }
    kept, gone = drop_running(ours, running, has_selection=False)
    assert gone == ["docs"] and set(kept) == {"wiki"}


def test_no_dedupe_with_a_selection_or_for_builtin_servers(tmp_path: Path, secret: str) -> None:
    path = write_user_config(tmp_path, command_table("n", notes(secret)) + command_table("a", {**agents(), "env": {}}))
    running = running_signatures(path, {})
    servers = {"notes": notes(secret), "agents": agents()}
    assert drop_running(servers, running, has_selection=True) == (servers, [])
    assert drop_running(servers, running, has_selection=False)[1] == ["notes"]  # the built-in is always mounted


def test_an_unreadable_user_config_changes_nothing(tmp_path: Path, secret: str) -> None:
    path = write_user_config(tmp_path, "this is [not toml")
    assert running_signatures(path, {}) == set()
    assert running_signatures(tmp_path / "absent.toml", {}) == set()


def test_the_user_config_is_found_under_codex_home_or_the_home_folder(tmp_path: Path) -> None:
    assert user_config_path({"CODEX_HOME": "/x"}) == Path("/x/config.toml")
    assert user_config_path({"HOME": "/home/u"}) == Path("/home/u/.codex/config.toml")


def test_nothing_left_to_mount_registers_no_sidecar(launches: list[Launch], tmp_path: Path, secret: str) -> None:
    write_user_config(tmp_path, command_table("n", notes(secret)))
    launch = prepare(launches, {"bot": {"id": "cody"}, "mcpServers": {"notes": notes(secret)}}, tmp_path)
    assert not any(arg.startswith("mcp_servers.") for arg in launch.argv)
    assert launch.argv == ["codex", "exec", "hi"]
