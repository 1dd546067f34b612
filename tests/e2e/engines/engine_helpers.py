"""Helpers for real engine turns: the pinned engines, the bots' settings, the turn runner.

(Not a conftest.py: other test modules import `conftest` by name, so a second one here
would shadow the suite's own.)

* `engine_path(name)`: the pinned engine from tests/engines/node_modules (installed by
  `./dev test`); skips, saying so, when it is not installed.
* `run_turn(spec, folder)`: runs tests/e2e/engines/engine_turn.py on the spec, inside its own
  loopback-only network namespace and PID namespace when the machine allows
  (`unshare --net --pid --fork --mount-proc`), bounded by the spec's timeout, and returns
  its JSON report (see engine_turn.py).
* `agents_entry()`, `fault_entry(...)`, `notes_entry(...)`: `mcpServers` entries for the
  bundled example servers and the scripted fault server.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
ENGINES = REPO / "tests" / "engines" / "node_modules" / ".bin"
RUNNER = Path(__file__).with_name("engine_turn.py")
EXAMPLES = REPO / "sidecar" / "examples"
FAULT_SERVER = REPO / "tests" / "upstreams" / "fault_server.py"
NAMESPACES = ["unshare", "--net", "--pid", "--fork", "--mount-proc"]


@functools.cache
def namespace_prefix() -> tuple[str, ...]:
    """`unshare ...` when this machine lets us make the namespaces, else nothing."""
    if shutil.which("unshare") is None:
        return ()
    try:
        done = subprocess.run([*NAMESPACES, "true"], capture_output=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return ()
    return tuple(NAMESPACES) if done.returncode == 0 else ()


def engine_path(name: str) -> str:
    path = ENGINES / name
    if not path.exists():
        pytest.skip(f"{name} is not installed: run ./dev test (it installs tests/engines)")
    return str(path)


def canary() -> str:
    return f"CANARY{uuid.uuid4().hex}"


def base_env(home: Path) -> dict[str, str]:
    """An engine's environment: PATH (for node), a private HOME, nothing else of ours."""
    home.mkdir(parents=True, exist_ok=True)
    return {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(home), "LANG": "C.UTF-8"}


def agents_entry(**extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(EXAMPLES / "agents.py")], "builtin": True, **extra}


def notes_entry(**extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(EXAMPLES / "notes.py")], **extra}


def fault_entry(*options: str, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(FAULT_SERVER), "name=fault", *options], **extra}


def summary(spec: dict[str, Any], result: dict[str, Any]) -> str:
    offered = next((r["tools"] for r in result["requests"] if r["tools"]), [])
    return "\n".join([
        f"{spec['shim']} turn: exit {result['exit_code']}, prepare {result['prepare_seconds']} s, "
        f"engine {result['engine_seconds']} s, settle {result['settle_seconds']} s, namespaced {result['namespaced']}",
        f"launch notes: {result['launch']['notes']}",
        f"tools offered ({len(offered)}): {offered}",
        f"model replies: {[r['reply'] for r in result['requests']]}",
        f"argv sweeps {result['argv_sweeps']}, argvs seen {result['argvs_seen']}, survivors {result['survivors']}",
    ])


def run_turn(spec: dict[str, Any], folder: Path) -> dict[str, Any]:
    spec_file = folder / f"spec-{uuid.uuid4().hex[:8]}.json"
    result_file = spec_file.with_suffix(".result.json")
    spec_file.write_text(json.dumps(spec))
    argv = [*namespace_prefix(), sys.executable, str(RUNNER), str(spec_file), str(result_file)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=spec.get("timeout", 120) + 60,
                          cwd=str(folder), stdin=subprocess.DEVNULL)
    if done.returncode != 0 or not result_file.exists():
        raise AssertionError(f"the turn runner failed ({done.returncode}):\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(result_file.read_text())
    result["namespaced"] = bool(namespace_prefix())
    print(summary(spec, result))  # shown when a test fails, or with -rP
    return result
