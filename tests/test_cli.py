"""The CLI a person finds: `--help` lists every command, each command's help ends with an
example, and a bare `omb-sidecar` typed at a terminal prints the help instead of waiting."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from sidecar.cli import COMMANDS, main
from tests.conftest import REPO, child_env

SUBCOMMANDS = [["serve"], ["demo"], ["add"], ["import"], ["check"], ["servers"], ["servers", "list"],
               ["servers", "show"], ["servers", "edit"], ["servers", "off"], ["servers", "remove"],
               ["servers", "health"]]


def _help_of(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stopped:
        main([*argv, "--help"])
    assert stopped.value.code == 0
    return capsys.readouterr().out


def test_help_lists_every_command_on_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    said = _help_of([], capsys)
    table = said.split("commands (", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    assert [row.split()[0] for row in table] == [name for name, _ in COMMANDS]
    assert {name for name, _ in COMMANDS} == {"serve", "demo", "add", "import", "check", "servers", "signin", "signout"}


@pytest.mark.parametrize("argv", SUBCOMMANDS, ids=[" ".join(a) for a in SUBCOMMANDS])
def test_each_command_help_ends_with_an_example(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    lines = _help_of(argv, capsys).rstrip().splitlines()
    assert lines[-2] == "example:" and lines[-1].startswith("  omb-sidecar "), lines[-3:]
    if argv[0] != "serve":
        assert lines[-1].startswith(f"  omb-sidecar {argv[0]}")


def test_a_bare_run_at_a_terminal_prints_the_help() -> None:
    leader, follower = pty.openpty()
    try:
        run = subprocess.run([sys.executable, "-m", "sidecar"], stdin=follower, capture_output=True, text=True,
                             timeout=30, cwd=REPO, env=child_env())
    finally:
        os.close(follower)
        os.close(leader)
    assert run.returncode == 0, run.stderr
    assert "commands (" in run.stdout and all(f"  {name} " in run.stdout for name, _ in COMMANDS)


def test_a_bare_run_without_a_terminal_says_what_is_missing() -> None:
    run = subprocess.run([sys.executable, "-m", "sidecar"], stdin=subprocess.DEVNULL, capture_output=True,
                         text=True, timeout=30, cwd=REPO, env=child_env())
    assert run.returncode == 2 and "--config PATH is required" in run.stderr and "--help" in run.stderr
    assert run.stdout == ""


def test_http_without_its_package_says_which_in_one_line(tmp_path: Path) -> None:
    config = tmp_path / "sidecar.json"
    config.write_text('{"mcpServers": {}}')
    code = "import sys; sys.modules['aiohttp'] = None; from sidecar.cli import main; sys.exit(main(sys.argv[1:]))"
    run = subprocess.run([sys.executable, "-c", code, "--config", str(config), "--http", "127.0.0.1:0",
                          "--token-env", "NONE"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                         timeout=30, cwd=REPO, env=child_env())
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.strip() == ("omb-sidecar: --http cannot run here: the package 'aiohttp' is not installed "
                                  "(pip install 'omb-sidecar[http]')")
