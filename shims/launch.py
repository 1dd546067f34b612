"""What every shim shares: the `Launch` it returns, the private folder and files of a turn,
the sidecar's command line, the sidecar config written for an engine, and running it all.

Owns: file modes (folder 0700, files 0600, created exclusively), the sidecar command
(`omb-sidecar` beside this Python, else `python -m sidecar`), and the config keys a shim
sets (`bot.engine`, `face.*`, `features.agentsToolBridge`). Refuses: a face name the
engines cannot use as a server name.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

__all__ = [
    "Launch",
    "DEFAULT_FACE",
    "face_name",
    "private_folder",
    "write_private_json",
    "sidecar_command",
    "engine_document",
    "check_document",
    "run_launch",
    "stop_group",
    "enabled_servers",
]

log = logging.getLogger(__name__)

DEFAULT_FACE = "omb"
_FACE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,32}$")


@dataclass(frozen=True)
class Launch:
    """An engine launch, ready to run: `argv` with `env` in `cwd`. `folder` holds the files
    written for this turn (0700); remove it when the engine has exited (`cleanup`)."""

    argv: list[str]
    env: dict[str, str]
    cwd: str | None
    folder: Path
    sidecar_config: Path | None  # None when the engine reaches a sidecar already running
    notes: tuple[str, ...] = ()  # what the shim decided, one line each
    extra: dict[str, Any] = field(default_factory=dict)  # engine-specific facts (bridge decision, ...)

    def cleanup(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def face_name(settings: Mapping[str, Any]) -> str:
    face = settings.get("face")
    name = face.get("name", DEFAULT_FACE) if isinstance(face, Mapping) else DEFAULT_FACE
    if not isinstance(name, str) or not _FACE_NAME.match(name):
        raise ValueError(f"face.name must be 1-32 letters, digits, '_' or '-', got {name!r}")
    return name


def private_folder(prefix: str, parent: str | Path | None = None) -> Path:
    """A new folder only this user can enter (mkdtemp makes it 0700)."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=parent))


def write_private_json(path: Path, document: Any) -> Path:
    """Write JSON to a new file with mode 0600 (never loosened by the umask, never reused)."""
    data = json.dumps(document, indent=1).encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.chmod(path, 0o600)
    return path


def sidecar_command(explicit: Sequence[str] | None = None) -> list[str]:
    """How to start the sidecar: `explicit`, else the `omb-sidecar` script installed beside
    this Python, else `python -m sidecar` with this Python."""
    if explicit:
        return list(explicit)
    script = Path(sys.executable).parent / "omb-sidecar"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    found = shutil.which("omb-sidecar")
    return [found] if found else [sys.executable, "-m", "sidecar"]


def engine_document(
    settings: Mapping[str, Any],
    engine: str,
    face: Mapping[str, Any],
    features: Mapping[str, Any] | None = None,
    servers: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The bot's settings as the sidecar config for this engine: `bot.engine`, the `face`
    keys and `features` keys given here set over the settings' own; `servers` replaces
    `mcpServers` when given."""
    document = copy.deepcopy(dict(settings))
    document["bot"] = {**_section(document, "bot"), "engine": engine}
    document["face"] = {**_section(document, "face"), **face}
    if features:
        document["features"] = {**_section(document, "features"), **features}
    if servers is not None:
        document["mcpServers"] = copy.deepcopy(dict(servers))
    return document


def _section(document: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = document.get(key)
    return dict(value) if isinstance(value, Mapping) else {}


def check_document(document: Mapping[str, Any]) -> None:
    """Validate a config document with the sidecar's own parser (raises its ConfigError)."""
    from sidecar.config import parse_config

    parse_config(dict(document), {})


def enabled_servers(settings: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The settings' `mcpServers` entries that are objects and not parked."""
    block = settings.get("mcpServers")
    if not isinstance(block, Mapping):
        return {}
    return {str(a): dict(e) for a, e in block.items() if isinstance(e, Mapping) and e.get("enabled", True) is not False}


def run_launch(launch: Launch, timeout: float | None = None) -> int:
    """Run the engine in its own process group, relay SIGINT/SIGTERM to it, wait, let what
    it started wind down (bounded), and remove the turn's folder. Returns the engine's
    exit code (124 on timeout)."""
    child = subprocess.Popen(launch.argv, env=launch.env, cwd=launch.cwd, start_new_session=True)

    def relay(signum: int, _frame: FrameType | None) -> None:
        _signal_group(child.pid, signum)

    previous = {s: signal.signal(s, relay) for s in (signal.SIGINT, signal.SIGTERM)}
    code = 124
    try:
        code = child.wait(timeout)
    except subprocess.TimeoutExpired:
        log.warning("the engine did not finish within %s s: stopping it", timeout)
        _signal_group(child.pid, signal.SIGTERM)
        try:
            child.wait(5)
        except subprocess.TimeoutExpired:
            _signal_group(child.pid, signal.SIGKILL)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        stop_group(child.pid)
        if child.poll() is None:
            child.wait()
        launch.cleanup()
    return code


def _signal_group(pgid: int, signum: int) -> bool:
    """Signal a process group; False when it has no process left."""
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _wait_group(pgid: int, seconds: float) -> bool:
    """Wait, bounded, for a process group to empty; True if it did."""
    deadline = time.monotonic() + seconds
    while _signal_group(pgid, 0):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def stop_group(pgid: int, grace: float = 5.0) -> None:
    """Let a process group end by itself, then SIGTERM it, then SIGKILL what is left."""
    if _wait_group(pgid, grace):
        return
    _signal_group(pgid, signal.SIGTERM)
    if not _wait_group(pgid, grace):
        _signal_group(pgid, signal.SIGKILL)
