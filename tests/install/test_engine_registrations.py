"""The README's "Use it with your engine", tried as written against the clean install.

`omb-sidecar` on PATH is the one in the clean venv (see `clean_venv`); the engines are the
pinned ones in tests/engines; each gets a home of its own. Registrations an engine can
health-check (`claude mcp list`) are checked that way; the others are proved by one turn
against a fake model API on 127.0.0.1 (tests/e2e/engines/model_fakes.py) that calls
`notes__search_notes` and must get the example server's answer back.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.engines.model_fakes import FakeModelAPI, Script, ToolStep
from tests.e2e.engines.turn_facts import tool_results
from tests.install.clean_venv import REPO, CleanInstall, clean_install  # noqa: F401 - the fixture

pytestmark = [pytest.mark.e2e, pytest.mark.engines, pytest.mark.timeout(900)]

ENGINES = REPO / "tests" / "engines" / "node_modules" / ".bin"
SEARCH = Script((ToolStep("notes__search_notes", {"query": "milk"}),))
TOKEN = "engine-registration-token-0123456789"
TURN_SECONDS = 120
CODEX_OFFLINE = ["-c", "analytics.enabled=false", "-c", "check_for_update_on_startup=false",
                 "--disable", "plugins", "--disable", "remote_plugin"]


def _engine(name: str) -> str:
    if not (ENGINES / name).exists():
        pytest.skip(f"{name} is not installed: run ./dev test (it installs tests/engines)")
    return name


@pytest.fixture
def user(clean_install: CleanInstall, tmp_path: Path) -> dict[str, Any]:  # noqa: F811 - the imported fixture
    """A user's shell: the clean install and the engines on PATH, a home of its own, the demo config."""
    home = tmp_path / "home"
    home.mkdir()
    node = os.path.dirname(shutil.which("node") or "/usr/bin/node")
    env = {"PATH": f"{clean_install.venv / 'bin'}:{ENGINES}:{node}:/usr/bin:/bin", "HOME": str(home),
           "LANG": "C.UTF-8", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    code = "import json; from sidecar.examples.demo import demo_config; print(json.dumps(demo_config()))"
    config = tmp_path / "sidecar.json"
    config.write_text(subprocess.run([str(clean_install.python), "-c", code], capture_output=True, text=True,
                                     check=True, env=env, timeout=60).stdout)
    return {"env": env, "config": str(config), "cwd": tmp_path, "install": clean_install}


def _run(user: dict[str, Any], *argv: str, env: dict[str, str] | None = None,
         timeout: float = TURN_SECONDS) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, cwd=user["cwd"],
                          env={**user["env"], **(env or {})}, stdin=subprocess.DEVNULL)


def _answered(api: FakeModelAPI, dialect: str, run: subprocess.CompletedProcess[str]) -> str:
    results = tool_results({"requests": api.requests}, dialect) if any(r["tools"] for r in api.requests) else []
    assert results, f"no tool result reached the model:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    return results[-1].text


def test_claude_mcp_add_then_list_connects(user: dict[str, Any]) -> None:
    claude = _engine("claude")
    added = _run(user, claude, "mcp", "add", "--scope", "user", "omb", "--", "omb-sidecar", "--config", user["config"])
    assert added.returncode == 0, added.stderr
    listed = _run(user, claude, "mcp", "list")
    assert re.search(r"^omb: omb-sidecar --config .* - ✔ Connected$", listed.stdout, re.MULTILINE), listed.stdout


def test_claude_with_mcp_config_calls_a_tool(user: dict[str, Any], tmp_path: Path) -> None:
    claude = _engine("claude")
    registration = tmp_path / "omb-mcp.json"
    registration.write_text(json.dumps({"mcpServers": {"omb": {"command": "omb-sidecar",
                                                               "args": ["--config", user["config"]]}}}))
    with FakeModelAPI("anthropic", SEARCH) as api:
        run = _run(user, claude, "-p", "find my milk note", "--mcp-config", str(registration), "--strict-mcp-config",
                   "--allowedTools", "mcp__omb", "--output-format", "stream-json", "--verbose",
                   env={"ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "fake-key",
                        "MCP_CONNECTION_NONBLOCKING": "0"})  # the README's advice for -p runs
    assert "groceries" in _answered(api, "anthropic", run)


def _codex_turn(user: dict[str, Any], *registration: str) -> str:
    codex = _engine("codex")
    provider = 'model_providers.fake={name="Fake", base_url="%s/v1", env_key="FAKE_KEY", wire_api="responses"}'
    with FakeModelAPI("responses", SEARCH) as api:
        run = _run(user, codex, "exec", "--skip-git-repo-check", "--ephemeral", "-s", "read-only", "--json",
                   "-c", provider % api.base_url, "-c", "model_provider=fake", "-m", "fake-model", *CODEX_OFFLINE,
                   *registration, "find my milk note", env={"FAKE_KEY": "fake-key"})
    return _answered(api, "responses", run)


def test_codex_mcp_add_writes_a_config_toml_that_a_turn_uses(user: dict[str, Any]) -> None:
    codex = _engine("codex")
    added = _run(user, codex, "mcp", "add", "omb", "--", "omb-sidecar", "--config", user["config"])
    assert added.returncode == 0, added.stderr
    written = Path(user["env"]["HOME"]) / ".codex" / "config.toml"
    toml = written.read_text()
    assert '[mcp_servers.omb]\ncommand = "omb-sidecar"' in toml
    written.write_text(toml.rstrip("\n") + "\nrequired = true\n")  # the README's one added line
    listed = _run(user, codex, "mcp", "list")
    assert re.search(r"^omb\s+omb-sidecar\s+--config .*enabled", listed.stdout, re.MULTILINE), listed.stdout
    # `codex exec` never asks: the tools of this server are approved for the turn
    assert "groceries" in _codex_turn(user, "-c", 'mcp_servers.omb.default_tools_approval_mode="approve"')


def test_codex_with_dash_c_calls_a_tool(user: dict[str, Any]) -> None:
    registration = ["-c", 'mcp_servers.omb.command="omb-sidecar"',
                    "-c", f'mcp_servers.omb.args=["--config", "{user["config"]}"]', "-c", "mcp_servers.omb.required=true",
                    "-c", 'mcp_servers.omb.default_tools_approval_mode="approve"']
    assert "groceries" in _codex_turn(user, *registration)


def test_pi_through_the_shim_calls_a_tool(user: dict[str, Any], tmp_path: Path) -> None:
    _engine("pi")
    agent = tmp_path / "pi-agent"
    agent.mkdir()
    with FakeModelAPI("chat", SEARCH) as api:
        models = {"providers": {"fake": {"baseUrl": f"{api.base_url}/v1", "api": "openai-completions",
                                         "apiKey": "FAKE_PI_KEY", "models": [{"id": "fake-model"}]}}}
        (agent / "models.json").write_text(json.dumps(models))
        run = _run(user, "python", "-m", "shims.pi", "--settings", user["config"], "--",
                   "--provider", "fake", "--model", "fake-model", "--no-session", "-p", "find my milk note",
                   env={"PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1", "FAKE_PI_KEY": "fake-key"})
    assert "groceries" in _answered(api, "chat", run)


def test_an_http_client_registered_in_claude_connects(user: dict[str, Any], tmp_path: Path) -> None:
    claude = _engine("claude")
    token = tmp_path / "omb-token"
    token.write_text(TOKEN)
    token.chmod(0o600)
    serving = subprocess.Popen(["omb-sidecar", "--config", user["config"], "--http", "127.0.0.1:0", "--token-file",
                                str(token), "--log-level", "INFO"], cwd=user["cwd"], env=user["env"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        url = _serving_url(serving)
        added = _run(user, claude, "mcp", "add", "--scope", "user", "--transport", "http", "omb", url,
                     "--header", f"Authorization: Bearer {TOKEN}")
        assert added.returncode == 0, added.stderr
        listed = _run(user, claude, "mcp", "list")
    finally:
        serving.send_signal(signal.SIGTERM)
        serving.wait(timeout=30)
    assert re.search(rf"^omb: {re.escape(url)} \(HTTP\) - ✔ Connected$", listed.stdout, re.MULTILINE), listed.stdout


def _serving_url(process: subprocess.Popen[str]) -> str:
    """The address from the sidecar's start-up line (it binds port 0; the line comes at once)."""
    assert process.stderr is not None
    for line in process.stderr:  # bounded by the test's timeout; the process exits on failure
        found = re.search(r"serving Streamable HTTP at (http://127\.0\.0\.1:\d+/mcp)", line)
        if found:
            return found.group(1)
    raise AssertionError(f"the sidecar stopped before serving (exit {process.wait()})")
