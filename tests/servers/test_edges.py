"""The admin commands' rough edges a new user meets (issue 21), each run as a person runs it
(a real process): a missing or empty config file named as such by every command that reads
one, each warning said once, why a command died (its stderr, redacted), and a dry run that
writes nothing."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.servers.test_commands import omb

CANARY = "canary-SECRET-7f3a9e"
# Every command that reads a config it did not make; `add` and `import` start a missing one.
READING = [["check", "notes"], ["servers"], ["servers", "list"], ["servers", "show", "notes"],
           ["servers", "edit", "notes"], ["servers", "off", "notes"], ["servers", "remove", "notes"],
           ["servers", "health"], ["servers", "health", "--all"], ["servers", "review", "notes"],
           ["servers", "approve", "notes"], ["signin", "notes"], ["signout", "notes"]]


def _folder(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


@pytest.mark.parametrize("argv", READING, ids=[" ".join(a) for a in READING])
async def test_a_missing_config_file_is_named_as_missing(tmp_path: Path, argv: list[str]) -> None:
    missing = tmp_path / "nope.json"
    run = await omb(*argv, "--config", str(missing), stdin="{}")
    assert run.code == 2, run
    assert run.err == (f"omb-sidecar: the config file {missing} does not exist (make one with "
                       f"`omb-sidecar import --config {missing}` or `omb-sidecar add --config {missing} ...`)\n")
    assert run.out == "" and _folder(tmp_path) == []  # nothing made on the way


@pytest.mark.parametrize("argv", [["servers"], ["check", "notes"]], ids=["servers", "check"])
async def test_an_empty_config_file_says_it_is_empty(tmp_path: Path, argv: list[str]) -> None:
    empty = tmp_path / "sidecar.json"
    empty.write_text("\n")
    run = await omb(*argv, "--config", str(empty))
    assert run.code == 2 and "truncated" not in run.err
    assert run.err.startswith(f"omb-sidecar: the config file {empty} is empty (write {{\"mcpServers\": {{}}}} in it")


async def test_add_starts_a_config_in_an_empty_file(tmp_path: Path) -> None:
    empty = tmp_path / "sidecar.json"
    empty.write_text("")
    run = await omb("add", "--config", str(empty), "--no-check", "npx -y @example/notes-mcp")
    assert run.code == 0, run
    assert list(json.loads(empty.read_text())["mcpServers"]) == ["notes"]


async def test_servers_says_each_warning_once(tmp_path: Path) -> None:
    path = tmp_path / "sidecar.json"
    path.write_text(json.dumps({"extra": 1, "mcpServers": {"notes": {"command": "npx", "typo": 2},
                                                           "agents": {"command": "npx"}}}))
    for argv in (["servers"], ["servers", "show", "notes"]):
        run = await omb(*argv, "--config", str(path))
        lines = run.err.splitlines()
        assert run.code == 0 and len(lines) == len(set(lines)) == 3, run.err
        assert any("unknown key mcpServers.notes.typo" in line for line in lines)


async def test_check_and_add_show_why_a_command_died_with_its_secrets_hidden(tmp_path: Path) -> None:
    """A real command that dies like an npm package that does not exist, its stderr holding
    the value of its own env: the last lines are shown, at the default log level, redacted."""
    script = ("import os, sys\n"
              "sys.stderr.write('\\x1b[31mnpm error\\x1b[0m code E404\\n')\n"
              "sys.stderr.write('npm error 404 Not Found - GET https://registry.npmjs.org/@nope%2fnope\\n')\n"
              "sys.stderr.write('npm error while using ' + os.environ['NOPE_TOKEN'] + '\\n')\n"
              "sys.exit(1)\n")
    path = tmp_path / "sidecar.json"
    entry = {"command": sys.executable, "args": ["-c", script], "env": {"NOPE_TOKEN": CANARY}}
    path.write_text(json.dumps({"mcpServers": {"nope": entry}}))
    check = await omb("check", "nope", "--config", str(path))
    assert check.code == 1
    assert check.out.splitlines()[:5] == [
        "Not connected: it stopped (exit code 1) before it finished the handshake",
        "  its stderr ends:",
        "    npm error code E404",
        "    npm error 404 Not Found - GET https://registry.npmjs.org/@nope%2fnope",
        "    npm error while using [redacted]",
    ]
    as_json = await omb("check", "nope", "--json", "--config", str(path))
    assert json.loads(as_json.out)["stderr"][-1] == "npm error while using [redacted]"
    fresh = tmp_path / "fresh.json"
    paste = json.dumps({"mcpServers": {"nope": entry}})
    added = await omb("add", "--config", str(fresh), stdin=paste)
    assert "  its stderr ends:" in added.out and "    npm error code E404" in added.out, added
    for run in (check, as_json, added):
        assert CANARY not in run.out + run.err
    assert CANARY not in (tmp_path / "mcp-health.json").read_text()


async def test_import_dry_run_writes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"memory": {"command": "npx", "args": ["-y", "m"]}}}))
    work = tmp_path / "work"
    work.mkdir()
    for config in (work / "new.json", work / "sidecar.json"):
        if config.name == "sidecar.json":
            config.write_text('{"mcpServers": {}}')
            os.chmod(config, 0o600)
        before = _folder(tmp_path)
        run = await omb("import", "--config", str(config), "--home", str(home), "--dry-run")
        assert run.code == 0 and "memory" in run.out, run
        assert _folder(tmp_path) == before  # no lock file, no config, no folder
