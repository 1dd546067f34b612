"""The CLI a person finds: `--help` lists every command, each command's help ends with an
example, and a bare `omb-sidecar` typed at a terminal prints the help instead of waiting.
Then the edges a new user met (issue 21): `--version`, `--examples` with its state kept out
of the package, a missing or empty config named, log lines that name a server once, and the
warning for a token file others can read."""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import anyio
import pytest

from sidecar.cli import COMMANDS, main
from tests.conftest import REPO, child_env, open_raw

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


# -- the edges a new user meets (issue 21) ----------------------------------------------------

CANARY = "canary-SECRET-51c0de"
SERVING = re.compile(r"serving Streamable HTTP at http://127\.0\.0\.1:(\d+)/mcp")


def _pyproject_version() -> str:
    version: str = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    return version


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if "__pycache__" not in p.parts}


def test_version_comes_from_the_package_metadata_and_shows_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--version"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out == f"omb-sidecar {_pyproject_version()}\n"
    assert f"omb-sidecar {_pyproject_version()}: An MCP proxy" in _help_of([], capsys)


@pytest.mark.parametrize("content", [None, "", "  \n"], ids=["missing", "empty", "blank"])
def test_serve_names_a_missing_or_empty_config_file(tmp_path: Path, content: str | None,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "sidecar.json"
    if content is not None:
        path.write_text(content)
    assert main(["--config", str(path)]) == 2
    said = capsys.readouterr().err
    assert said.startswith(f"omb-sidecar: config error: the config file {path} "
                           f"{'does not exist' if content is None else 'is empty'} (")
    assert "truncated" not in said and "--config" in said


async def test_examples_serve_the_bundled_servers_and_keep_state_out_of_the_package(tmp_path: Path) -> None:
    examples = REPO / "sidecar" / "examples"
    before = _files_under(examples)
    env = {"PYTHONPATH": str(REPO), "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
    async with open_raw([sys.executable, "-m", "sidecar", "--examples"], env=env, cwd=tmp_path) as peer:
        await peer.initialize()
        tools = await peer.wait_for_tools(["notes__search_notes", "agents__list_bots"])
        answer = await peer.call("notes__search_notes", {"query": "milk"})
    assert "notes__search_notes" in {t["name"] for t in tools}
    assert "groceries" in answer["result"]["content"][0]["text"], answer
    # what it learned (the tools it pinned) sits in the state folder, not beside demo.json
    assert '"notes"' in (tmp_path / "state" / "omb-sidecar" / "demo" / "mcp-health.json").read_text()
    # the bundled config named by its path, from its own folder: the same state folder
    async with open_raw([sys.executable, "-m", "sidecar", "--config", "demo.json"], env=env, cwd=examples) as peer:
        await peer.initialize()
        await peer.wait_for_tools(["notes__search_notes"])
    assert _files_under(examples) == before


async def test_a_failing_server_is_named_once_and_a_url_server_shows_no_session_noise(tmp_path: Path) -> None:
    crash = f"import sys; sys.stderr.write('npm error 404 {CANARY}\\n'); sys.exit(1)"
    config = tmp_path / "sidecar.json"
    config.write_text(json.dumps({"mcpServers": {
        "broken": {"command": sys.executable, "args": ["-c", crash], "env": {"NPM_TOKEN": CANARY}},
        "web": {"url": f"http://127.0.0.1:{_closed_port()}/mcp"}}}))
    async with open_raw([sys.executable, "-m", "sidecar", "--config", str(config)]) as peer:
        await peer.initialize()
        await peer.list_tools(timeout=30)
        await peer.shutdown()
        said = peer.stderr
    lines = said.splitlines()
    broken = [line for line in lines if "'broken'" in line and "supervisor" in line]
    web = [line for line in lines if "'web'" in line and "supervisor" in line]
    assert broken and web, said
    assert all(line.count("'broken'") == 1 for line in broken), broken
    assert all(line.count("'web'") == 1 for line in web), web
    assert any("upstream 'broken' stopped (exit code 1)" in line and "npm error 404 [redacted]" in line
               for line in broken), broken
    assert all(line.endswith("upstream 'web' could not be reached") for line in web), web
    assert "HTTP session" not in said and "protocol ?" not in said and CANARY not in said


async def _stderr_until_serving(argv: list[str], cwd: Path) -> str:
    """Start an HTTP sidecar, read its stderr until it serves, stop it; the stderr read."""
    process = await anyio.open_process(argv, cwd=cwd, env=child_env({"PYTHONPATH": str(REPO)}),
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    said = ""
    try:
        assert process.stderr is not None
        with anyio.fail_after(60):
            async for chunk in process.stderr:
                said += chunk.decode(errors="replace")
                if SERVING.search(said):
                    break
    finally:
        process.send_signal(signal.SIGTERM)
        with anyio.fail_after(30):
            await process.wait()
    assert SERVING.search(said), said
    return said


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o600], ids=["others", "group", "private"])
async def test_a_token_file_others_can_read_gets_one_warning(tmp_path: Path, mode: int) -> None:
    config = tmp_path / "sidecar.json"
    config.write_text('{"mcpServers": {}}')
    token = tmp_path / "token"
    token.write_text("http-front-token-0123456789\n")
    token.chmod(mode)
    said = await _stderr_until_serving([sys.executable, "-m", "sidecar", "--config", str(config), "--http",
                                        "127.0.0.1:0", "--token-file", str(token), "--log-level", "INFO"], tmp_path)
    warned = [line for line in said.splitlines() if "can be read by other users" in line]
    if mode == 0o600:
        assert warned == [], said
    else:
        assert warned == [f"omb-sidecar WARNING sidecar.private_files: the token file {token} can be read by other "
                          f"users (mode 0{mode:o}): run `chmod 600 {token}`"], said
    assert "http-front-token" not in said


def test_the_plain_serve_command_line_reads_as_the_parser_reads_it() -> None:
    """`[serve] --config PATH` skips argparse (building the parser costs start-up time): what
    it yields is what the parser yields; anything else is left to the parser."""
    from sidecar.cli import _plain_serve, _serve_parser
    from sidecar.settings import Settings

    settings = Settings.read()
    for argv in (["--config", "a.json"], ["serve", "--config", "a.json"], ["--config=a b.json"]):
        plain = _plain_serve(argv, settings)
        assert plain is not None and vars(plain) == vars(_serve_parser(settings).parse_args(argv)), argv
    for argv in (["--config", "-x"], ["--conf", "a"], ["--config"], ["demo"], [], ["--examples"],
                 ["--config", "a", "--http", "127.0.0.1:1"], ["--config", "a", "--log-level", "DEBUG"]):
        assert _plain_serve(argv, settings) is None, argv
