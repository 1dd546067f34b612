"""A shim's `--dry-run` leaves nothing behind: the turn's folder (the sidecar config, the
engine's MCP config, the probe's config) is gone when the command ends, also when the
reader of its output stops before it is written. Checked by listing the folders (a private
TMPDIR, the settings' folder, the home) before and after a real run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, child_env

EXAMPLES = REPO / "sidecar" / "examples"


def _tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def _settings(tmp_path: Path) -> Path:
    """A bot with a built-in server, so the dry run also probes a real sidecar for its tools."""
    servers = {"agents": {"command": sys.executable, "args": [str(EXAMPLES / "agents.py")], "builtin": True},
               "notes": {"command": sys.executable, "args": [str(EXAMPLES / "notes.py")]}}
    path = tmp_path / "bot" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"bot": {"id": "iris", "engine": "claude"}, "mcpServers": servers}))
    return path


def _dry_run(tmp_path: Path, engine: str, reader_stops: bool) -> subprocess.CompletedProcess[bytes] | int:
    settings = _settings(tmp_path)
    (tmp_path / "tmp").mkdir()
    (tmp_path / "home").mkdir()
    env = child_env({"PYTHONPATH": str(REPO), "TMPDIR": str(tmp_path / "tmp"), "HOME": str(tmp_path / "home"),
                     "OMB_AGENTS_TOOL_BRIDGE": "1"})
    argv = [sys.executable, "-m", f"shims.{engine}", "--settings", str(settings), "--dry-run",
            "--sidecar", json.dumps([sys.executable, "-m", "sidecar"])]
    if not reader_stops:
        return subprocess.run(argv, capture_output=True, timeout=120, cwd=tmp_path, env=env, stdin=subprocess.DEVNULL)
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path, env=env,
                               stdin=subprocess.DEVNULL)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # the reader is gone before a byte is written (`| head -0`)
    stderr = process.stderr.read()
    code = process.wait(timeout=120)
    assert b"Traceback" not in stderr, stderr.decode()
    return code


@pytest.mark.parametrize("engine", ["claude", "codex"])
def test_a_dry_run_leaves_no_folder_and_no_copy_of_the_config(tmp_path: Path, engine: str) -> None:
    run = _dry_run(tmp_path, engine, reader_stops=False)
    assert isinstance(run, subprocess.CompletedProcess) and run.returncode == 0, run
    described = json.loads(run.stdout)
    assert described["sidecar_config"].startswith(str(tmp_path / "tmp"))  # it was made there, and is gone
    assert _tree(tmp_path / "tmp") == [] and _tree(tmp_path / "home") == []
    assert _tree(tmp_path / "bot") == ["settings.json"]


def test_a_dry_run_whose_reader_stops_early_leaves_nothing(tmp_path: Path) -> None:
    assert _dry_run(tmp_path, "claude", reader_stops=True) == 0
    assert _tree(tmp_path / "tmp") == [] and _tree(tmp_path / "bot") == ["settings.json"]
