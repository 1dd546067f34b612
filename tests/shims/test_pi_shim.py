"""pi's shim: the launch (`-ne -e <extension>`, the launch file, no secret on argv), the
extension's shape (one TypeScript file importing only Node's own modules), and the
extension driven the way pi drives it (pi_harness.mjs, with pi's own loader) against the
real sidecar: registration with schemas, calls, error results, a tool the sidecar stopped
listing refused in the `tool_call` hook, and the sidecar stopped at shutdown."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from shims.pi import EXTENSION, LAUNCH_VARIABLE, PiOptions, prepare_pi

REPO = Path(__file__).resolve().parents[2]
FAULT = REPO / "tests" / "upstreams" / "fault_server.py"
HARNESS = Path(__file__).with_name("pi_harness.mjs")
JITI = REPO / "tests" / "engines" / "node_modules" / "jiti"


def settings_for(secret: str, record: Path | None = None) -> dict[str, Any]:
    options = [f"record={record}"] if record else []
    return {"bot": {"id": "pia"}, "mcpServers": {
        "fault": {"command": sys.executable, "args": [str(FAULT), "name=fault", *options], "env": {"FAULT_TOKEN": secret},
                  "pinning": "warn"},  # it adds a tool on purpose: pinning would hold it
    }}


def test_the_launch(tmp_path: Path) -> None:
    secret = f"CANARY{uuid.uuid4().hex}"
    launch = prepare_pi(settings_for(secret), PiOptions(args=["-p", "hi"], environ={"PATH": "/usr/bin"}))
    try:
        assert launch.argv == ["pi", "-ne", "-e", str(EXTENSION), "-p", "hi"]
        launch_file = Path(launch.env[LAUNCH_VARIABLE])
        assert stat.S_IMODE(launch_file.stat().st_mode) == 0o600
        assert stat.S_IMODE(launch.folder.stat().st_mode) == 0o700
        described = json.loads(launch_file.read_text())
        assert described["args"][-2:] == ["--config", str(launch.sidecar_config)]
        config = json.loads(Path(str(launch.sidecar_config)).read_text())
        assert config["bot"]["engine"] == "pi" and config["features"]["agentsToolBridge"] is False
        assert config["face"]["layout"] == "auto" and config["face"]["listWaitSeconds"] == 10.0
        assert not any(secret in arg for arg in launch.argv) and secret not in launch_file.read_text()
    finally:
        launch.cleanup()
    assert not launch.folder.exists()


def test_reaching_a_running_sidecar_writes_no_config(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("s3cret")
    launch = prepare_pi({"bot": {"id": "pia"}}, PiOptions(url="http://127.0.0.1:7777/mcp/omb", token_file=str(token)))
    try:
        assert launch.sidecar_config is None
        assert json.loads(Path(launch.env[LAUNCH_VARIABLE]).read_text()) == {
            "url": "http://127.0.0.1:7777/mcp/omb", "tokenFile": str(token)}
        assert "s3cret" not in " ".join(launch.argv)
    finally:
        launch.cleanup()


def test_the_extension_is_one_file_with_only_node_imports() -> None:
    text = EXTENSION.read_text()
    imports = re.findall(r'^\s*import\s[^;]*?from\s+"([^"]+)"', text, re.MULTILINE)
    assert imports and all(name.startswith("node:") for name in imports), imports
    assert "require(" not in text
    assert [p.name for p in EXTENSION.parent.iterdir() if p.suffix in (".ts", ".js", ".mjs")] == [EXTENSION.name]


@pytest.mark.e2e
def test_the_extension_driven_like_pi_against_the_sidecar(tmp_path: Path) -> None:
    if not JITI.exists() or shutil.which("node") is None:
        pytest.skip("node and tests/engines (jiti) are needed: run ./dev test")
    secret, record = f"CANARY{uuid.uuid4().hex}", tmp_path / "fault.jsonl"
    launch = prepare_pi(settings_for(secret, record), PiOptions())
    try:
        done = subprocess.run(["node", str(HARNESS), str(EXTENSION)], capture_output=True, text=True, timeout=90,
                              env={**os.environ, **launch.env}, cwd=tmp_path)
    finally:
        launch.cleanup()
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"fault__echo", "fault__records", "query_result"} <= set(report["initial"])
    assert report["echoParameters"]["properties"]["nonce"]["type"] == "string"  # the MCP schema as pi's parameters
    assert report["echo"]["result"]["content"] == [{"type": "text", "text": "n-1"}]
    assert report["echo"]["result"]["details"]["structuredContent"] == {"nonce": "n-1", "server": "fault"}
    assert "bad input" in report["toolError"]["error"]
    assert "upstream says no" in report["rpcError"]["error"]
    assert report["gadgetBefore"]["result"]["content"][0]["text"] == "n-2"
    assert "no longer offered" in report["gadgetAfter"]["blocked"]
    events = [json.loads(line) for line in record.read_text().splitlines()]
    called = [json.loads(e["raw"])["params"].get("nonce") or json.loads(e["raw"])["params"]["arguments"].get("nonce")
              for e in events if e.get("event") == "recv" and '"tools/call"' in e.get("raw", "")]
    assert "n-2" in called and "n-3" not in called  # the refused call never reached the upstream
    assert any(e.get("event") == "exit" for e in events)  # the sidecar stopped its upstream at shutdown


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.e2e
def test_the_extension_reaches_a_sidecar_serving_http(tmp_path: Path) -> None:
    if not JITI.exists() or shutil.which("node") is None:
        pytest.skip("node and tests/engines (jiti) are needed: run ./dev test")
    import urllib.request

    secret, record = f"CANARY{uuid.uuid4().hex}", tmp_path / "fault.jsonl"
    config, token = tmp_path / "sidecar.json", tmp_path / "token"
    config.write_text(json.dumps({**settings_for(secret, record), "face": {"name": "omb", "listWaitSeconds": 10}}))
    token.write_text(uuid.uuid4().hex)
    token.chmod(0o600)
    port = free_port()
    sidecar = subprocess.Popen([sys.executable, "-m", "sidecar", "--config", str(config), "--http", f"127.0.0.1:{port}",
                                "--token-file", str(token)], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(200):  # bounded: until the listener answers
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
                break
            except OSError:
                if sidecar.poll() is not None:
                    pytest.fail(f"the sidecar exited: {sidecar.stderr.read().decode() if sidecar.stderr else ''}")
                time.sleep(0.05)
        launch = prepare_pi({"bot": {"id": "pia"}}, PiOptions(url=f"http://127.0.0.1:{port}/mcp/omb", token_file=str(token)))
        try:
            done = subprocess.run(["node", str(HARNESS), str(EXTENSION)], capture_output=True, text=True, timeout=90,
                                  env={**os.environ, **launch.env}, cwd=tmp_path)
        finally:
            launch.cleanup()
    finally:
        sidecar.terminate()
        sidecar.wait(15)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"fault__echo", "query_result"} <= set(report["initial"])
    assert report["echo"]["result"]["content"] == [{"type": "text", "text": "n-1"}]
    assert "upstream says no" in report["rpcError"]["error"]
    assert "no longer offered" in report["gadgetAfter"]["blocked"]  # list_changed came over the GET stream
