"""The edges a new user met with the installed wheel (issue 21), run from the clean venv
outside the checkout (see `clean_venv`): `--version`, the bundled examples served over
stdio and over `--http` with one documented command, no state written beside the installed
package (not even by a failed attempt on the packaged config), and a missing or empty
config file named as such."""

from __future__ import annotations

import json
import signal
import subprocess
import tomllib
from pathlib import Path

import anyio
import pytest

from tests.conftest import open_raw
from tests.install.clean_venv import REPO, CleanInstall, clean_env, clean_install  # noqa: F401 - the fixture
from tests.install.test_clean_install import TOKEN, WAIT, _initialize_and_call, _run, _serving_port

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]


@pytest.fixture
def installed(clean_install: CleanInstall) -> CleanInstall:
    return clean_install


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    assert REPO not in tmp_path.parents
    (tmp_path / "home").mkdir()
    return tmp_path


def _package_files(installed: CleanInstall) -> set[str]:
    """Every file of the installed packages (bytecode aside): what must never change."""
    (site,) = installed.venv.glob("lib/python*/site-packages")
    return {str(p.relative_to(site)) for name in ("sidecar", "sidecar_admin", "shims")
            for p in (site / name).rglob("*") if "__pycache__" not in p.parts}


def _packaged_demo(installed: CleanInstall) -> Path:
    (path,) = installed.venv.glob("lib/python*/site-packages/sidecar/examples/demo.json")
    return path


def test_version_is_the_package_version(installed: CleanInstall, outside: Path) -> None:
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    run = _run(installed, outside, "--version")
    assert (run.returncode, run.stdout) == (0, f"omb-sidecar {version}\n"), run.stderr
    assert f"omb-sidecar {version}: " in _run(installed, outside, "--help").stdout


async def test_examples_over_stdio_answer_list_and_call(installed: CleanInstall, outside: Path) -> None:
    before = _package_files(installed)
    argv = [str(installed.sidecar), "--examples"]
    async with open_raw(argv, full_env=clean_env(outside / "home"), cwd=outside) as peer:
        info = await peer.initialize(timeout=WAIT)
        tools = await peer.wait_for_tools(["notes__search_notes", "agents__list_bots"], timeout=WAIT)
        answer = await peer.call("notes__search_notes", {"query": "milk"}, timeout=WAIT)
    assert info["serverInfo"]["name"] == "omb-sidecar" and len(tools) >= 2
    assert answer["result"].get("isError") is not True and "groceries" in answer["result"]["content"][0]["text"]
    assert "Traceback" not in peer.stderr
    assert _package_files(installed) == before


async def test_examples_over_http_answer_initialize_and_a_call(installed: CleanInstall, outside: Path) -> None:
    token = outside / "token"
    token.write_text(TOKEN + "\n")
    token.chmod(0o600)
    argv = [str(installed.sidecar), "serve", "--examples", "--http", "127.0.0.1:0", "--token-file", str(token),
            "--log-level", "INFO"]
    process = await anyio.open_process(argv, cwd=outside, env=clean_env(outside / "home"),
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    log: list[str] = []
    try:
        port = await _serving_port(process, log)
        answers = await _initialize_and_call(f"http://127.0.0.1:{port}/mcp")
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        with anyio.fail_after(WAIT):
            await process.wait()
    call = answers["tools/call"]["result"]
    assert call.get("isError") is not True and "groceries" in call["content"][0]["text"], call
    said = "".join(log)
    assert "Traceback" not in said and TOKEN not in said and "can be read by other users" not in said


async def test_the_packaged_config_keeps_its_state_out_of_the_package(installed: CleanInstall,
                                                                      outside: Path) -> None:
    """What a pip user tried first, `--config <site-packages>/sidecar/examples/demo.json`:
    served from the package's folder (its servers start, their tools are pinned) and checked
    from elsewhere (its relative paths fail, the failure is recorded): the state goes to the
    user's state folder, and not one file of the package changes."""
    before = _package_files(installed)
    demo = _packaged_demo(installed)
    async with open_raw([str(installed.sidecar), "--config", str(demo)], full_env=clean_env(outside / "home"),
                        cwd=demo.parent) as peer:
        await peer.initialize(timeout=WAIT)
        await peer.wait_for_tools(["notes__search_notes"], timeout=WAIT)
    run = _run(installed, outside, "check", "notes", "--config", str(demo))
    assert run.returncode == 1 and "Not connected" in run.stdout and "its stderr ends:" in run.stdout, run
    assert _package_files(installed) == before
    state = outside / "home" / ".local" / "state" / "omb-sidecar" / "demo"
    assert '"notes"' in (state / "mcp-health.json").read_text()


@pytest.mark.parametrize("argv", [["servers"], ["check", "notes"], ["serve"]], ids=["servers", "check", "serve"])
def test_a_missing_or_empty_config_is_named(installed: CleanInstall, outside: Path, argv: list[str]) -> None:
    missing = outside / "nope.json"
    run = _run(installed, outside, *argv, "--config", str(missing))
    assert run.returncode == 2 and f"the config file {missing} does not exist" in run.stderr, run
    assert not missing.exists()
    empty = outside / "empty.json"
    empty.write_text("")
    run = _run(installed, outside, *argv, "--config", str(empty))
    assert run.returncode == 2 and f"the config file {empty} is empty" in run.stderr, run
    assert "truncated" not in run.stderr


# -- the other edges, from the wheel ---------------------------------------------------------

CANARY = "canary-SECRET-wheel-93b1"


def _tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def _dying_entry(python: Path) -> dict[str, object]:
    """A command that dies like an npm package that does not exist, its env in its stderr."""
    script = ("import os, sys; sys.stderr.write('npm error 404 Not Found\\nnpm error token ' "
              "+ os.environ['NPM_TOKEN'] + '\\n'); sys.exit(1)")
    return {"command": str(python), "args": ["-c", script], "env": {"NPM_TOKEN": CANARY}}


def test_check_shows_why_a_command_died_redacted(installed: CleanInstall, outside: Path) -> None:
    config = outside / "sidecar.json"
    config.write_text(json.dumps({"extra": 1, "mcpServers": {"nope": _dying_entry(installed.python)}}))
    run = _run(installed, outside, "check", "nope", "--config", str(config))
    assert run.returncode == 1
    assert run.stdout.splitlines()[1:4] == ["  its stderr ends:", "    npm error 404 Not Found",
                                            "    npm error token [redacted]"], run.stdout
    assert CANARY not in run.stdout + run.stderr
    assert run.stderr.splitlines() == ["omb-sidecar WARNING sidecar.config: config: unknown key extra ignored"]


async def test_a_failing_server_is_named_once_in_the_log(installed: CleanInstall, outside: Path) -> None:
    config = outside / "sidecar.json"
    config.write_text(json.dumps({"mcpServers": {"nope": _dying_entry(installed.python),
                                                 "web": {"url": "http://127.0.0.1:9/mcp"}}}))
    async with open_raw([str(installed.sidecar), "--config", str(config)], full_env=clean_env(outside / "home"),
                        cwd=outside) as peer:
        await peer.initialize(timeout=WAIT)
        await peer.list_tools(timeout=WAIT)
        await peer.shutdown()
    said = peer.stderr
    assert "upstream 'nope' stopped (exit code 1)" in said and "upstream 'web' could not be reached" in said, said
    assert "upstream 'nope' upstream" not in said and "upstream 'web' upstream" not in said
    assert "HTTP session" not in said and CANARY not in said


def test_dry_runs_write_nothing(installed: CleanInstall, outside: Path) -> None:
    home = outside / "home"
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"memory": {"command": "npx", "args": ["m"]}}}))
    before = _tree(outside)
    run = _run(installed, outside, "import", "--config", str(outside / "sidecar.json"), "--home", str(home),
               "--dry-run")
    assert run.returncode == 0 and "memory" in run.stdout, run
    assert _tree(outside) == before  # no lock file, no config
    settings = outside / "settings.json"
    settings.write_text(json.dumps({"bot": {"id": "iris", "engine": "claude"}, "mcpServers": {}}))
    before = _tree(outside)
    env = {**clean_env(home), "TMPDIR": str(outside / "tmp")}
    (outside / "tmp").mkdir()
    shim = subprocess.run([str(installed.python), "-m", "shims.claude", "--settings", str(settings), "--dry-run"],
                          capture_output=True, text=True, timeout=120, cwd=outside, env=env, stdin=subprocess.DEVNULL)
    assert shim.returncode == 0 and json.loads(shim.stdout)["sidecar_config"].startswith(str(outside / "tmp"))
    assert _tree(outside) == sorted([*before, "tmp"]), _tree(outside)  # the empty TMPDIR the test made


async def test_a_token_file_others_can_read_is_named_once(installed: CleanInstall, outside: Path) -> None:
    token = outside / "token"
    token.write_text(TOKEN + "\n")
    token.chmod(0o644)
    argv = [str(installed.sidecar), "--examples", "--http", "127.0.0.1:0", "--token-file", str(token),
            "--log-level", "INFO"]
    process = await anyio.open_process(argv, cwd=outside, env=clean_env(outside / "home"),
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    log: list[str] = []
    try:
        await _serving_port(process, log)
    finally:
        process.send_signal(signal.SIGTERM)
        with anyio.fail_after(WAIT):
            await process.wait()
    warned = [line for line in "".join(log).splitlines() if "can be read by other users" in line]
    assert warned == [f"omb-sidecar WARNING sidecar.private_files: the token file {token} can be read by other "
                      f"users (mode 0644): run `chmod 600 {token}`"], log
