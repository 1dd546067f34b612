"""What a new user installs is what the tests test.

The wheel built from this checkout, installed with no extras and no editable path into a
venv outside the checkout (see `clean_venv`), run from a folder outside the checkout:
the demo answers every step (the `query_result` step with records), `--http` serves an
`initialize` and a `tools/call` over real HTTP on loopback, and `check` connects to a
bundled example server. A runtime dependency missing from pyproject.toml fails here.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest

from tests.install.clean_venv import REPO, SOURCES, CleanInstall, clean_env, clean_install  # noqa: F401 - the fixture

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

TOKEN = "clean-install-token-0123456789"
SERVING = re.compile(r"serving Streamable HTTP at http://127\.0\.0\.1:(\d+)/mcp")
WAIT = 60.0


@pytest.fixture
def installed(clean_install: CleanInstall) -> CleanInstall:
    return clean_install


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A working folder and a home of their own, neither inside the checkout."""
    assert REPO not in tmp_path.parents
    (tmp_path / "home").mkdir()
    return tmp_path


def _run(installed: CleanInstall, where: Path, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(installed.sidecar), *argv], capture_output=True, text=True, timeout=timeout,
                          cwd=where, env=clean_env(where / "home"), stdin=subprocess.DEVNULL)


def _demo_config(installed: CleanInstall, where: Path) -> Path:
    """The bundled example config, its servers resolved inside the installed package."""
    code = "import json; from sidecar.examples.demo import demo_config; print(json.dumps(demo_config()))"
    run = subprocess.run([str(installed.python), "-c", code], capture_output=True, text=True, check=True,
                         cwd=where, env=clean_env(where / "home"), timeout=60)
    path = where / "sidecar.json"
    path.write_text(run.stdout)
    return path


def test_the_wheel_holds_every_file_of_the_packages(installed: CleanInstall) -> None:
    """Code and data (the example config and servers, the pi extension): nothing left behind."""
    packages = [name for name in SOURCES if (REPO / name).is_dir()]
    wanted = {str(p.relative_to(REPO)) for name in packages for p in (REPO / name).rglob("*")
              if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}
    held = set(zipfile.ZipFile(installed.wheel).namelist())
    # the command's script is held as a script of the wheel (installed into the venv's bin/)
    scripts = {name for name in wanted if name.startswith("sidecar/scripts/")}
    assert scripts == {"sidecar/scripts/omb-sidecar"}
    assert {f"omb_sidecar-0.1.0.data/scripts/{Path(name).name}" for name in scripts} <= held
    assert not wanted - scripts - held
    assert {"sidecar/examples/demo.json", "shims/pi/omb-sidecar.ts", "sidecar_admin/commands.py"} <= held


def test_the_package_comes_from_the_wheel_not_the_checkout(installed: CleanInstall, outside: Path) -> None:
    code = "import sidecar, jmespath, aiohttp, cryptography.fernet; print(sidecar.__file__)"
    run = subprocess.run([str(installed.python), "-c", code], capture_output=True, text=True, cwd=outside,
                         env=clean_env(outside / "home"), timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    where = Path(run.stdout.strip())
    assert installed.venv in where.parents and REPO not in where.parents


def test_the_demo_answers_every_step(installed: CleanInstall, outside: Path) -> None:
    run = _run(installed, outside, "demo")
    said = run.stdout + run.stderr
    assert run.returncode == 0, said[-3000:]
    assert "internal error" not in said and "Traceback" not in said, said[-3000:]
    step = said.split("== tools/call query_result", 1)[1].split("\n==", 1)[0]
    answer = json.loads(step.split("->", 1)[1])
    assert isinstance(answer, list) and answer and all(str(t).startswith("note ") for t in answer), step


def test_check_connects_to_a_bundled_example(installed: CleanInstall, outside: Path) -> None:
    config = _demo_config(installed, outside)
    run = _run(installed, outside, "check", "notes", "--config", str(config))
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(r"Connected: \d+ tools", run.stdout), run.stdout
    assert "Traceback" not in run.stderr


async def test_http_serves_initialize_and_a_tool_call(installed: CleanInstall, outside: Path) -> None:
    config = _demo_config(installed, outside)
    token = outside / "token"
    token.write_text(TOKEN + "\n")
    token.chmod(0o600)
    argv = [str(installed.sidecar), "--config", str(config), "--http", "127.0.0.1:0", "--token-file", str(token),
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
    assert answers["initialize"]["result"]["serverInfo"]["name"] == "omb-sidecar"
    call = answers["tools/call"]["result"]
    assert call.get("isError") is not True and "groceries" in call["content"][0]["text"], call
    assert "Traceback" not in "".join(log) and TOKEN not in "".join(log)


async def _serving_port(process: anyio.abc.Process, log: list[str]) -> int:
    assert process.stderr is not None
    with anyio.fail_after(WAIT):
        async for chunk in process.stderr:
            log.append(chunk.decode(errors="replace"))
            found = SERVING.search("".join(log))
            if found:
                return int(found.group(1))
    raise AssertionError(f"the sidecar stopped before serving: {''.join(log)[-3000:]}")


async def _initialize_and_call(url: str) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "clean-install", "version": "1"}}}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "notes__search_notes", "arguments": {"query": "milk"}}}
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=WAIT)) as client:
        async with client.post(url, json=initialize, headers=headers) as response:
            assert response.status == 200, await response.text()
            first = _answer(response.headers.get("Content-Type", ""), await response.text())
            session = {**headers, "Mcp-Session-Id": response.headers["Mcp-Session-Id"],
                       "MCP-Protocol-Version": first["result"]["protocolVersion"]}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        async with client.post(url, json=note, headers=session) as response:
            assert response.status == 202, await response.text()
        async with client.post(url, json=call, headers=session) as response:
            assert response.status == 200, await response.text()
            second = _answer(response.headers.get("Content-Type", ""), await response.text())
    return {"initialize": first, "tools/call": second}


def _answer(content_type: str, body: str) -> dict[str, Any]:
    """The JSON-RPC answer of a POST, sent as JSON or as the last `data:` of an event stream."""
    if content_type.startswith("text/event-stream"):
        frames = [json.loads(line[5:]) for line in body.splitlines() if line.startswith("data:") and line[5:].strip()]
        answers = [f for f in frames if "id" in f and ("result" in f or "error" in f)]
        assert answers, body
        return dict(answers[-1])
    return dict(json.loads(body))
