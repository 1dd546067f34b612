"""The Claude CLI's version: read once with `claude --version`, remembered per executable.

Owns parsing the answer (`2.1.197 (Claude Code)`) and the memory: keyed by the resolved
executable and its size and modification time, so a CLI updated in place is asked again.
An executable that cannot be run, or an answer without a version, gives None: unknown,
which the bridge decision counts as too old.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
from collections.abc import Mapping

__all__ = ["SETTING_SOURCES_SINCE", "Version", "claude_version", "parse_version", "has_setting_sources", "forget_versions"]

log = logging.getLogger(__name__)

Version = tuple[int, int, int]
SETTING_SOURCES_SINCE: Version = (1, 0, 122)  # the first CLI with --setting-sources
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
_known: dict[tuple[str, int, int], Version | None] = {}


def parse_version(text: str) -> Version | None:
    found = _VERSION.search(text)
    if found is None:
        return None
    major, minor, patch = (int(part) for part in found.groups())
    return major, minor, patch


def has_setting_sources(version: Version | None) -> bool:
    return version is not None and version >= SETTING_SOURCES_SINCE


def _identity(executable: str) -> tuple[str, int, int] | None:
    found = shutil.which(executable)
    if found is None:
        return None
    real = os.path.realpath(found)
    info = os.stat(real)
    return real, info.st_size, info.st_mtime_ns


def claude_version(executable: str = "claude", env: Mapping[str, str] | None = None, timeout: float = 30.0) -> Version | None:
    """The version `executable --version` prints, asked once per installed executable."""
    try:
        key = _identity(executable)
    except OSError:
        return None
    if key is None:
        return None
    if key not in _known:
        _known[key] = _ask(executable, env, timeout)
    return _known[key]


def _ask(executable: str, env: Mapping[str, str] | None, timeout: float) -> Version | None:
    try:
        done = subprocess.run(
            [executable, "--version"], capture_output=True, text=True, timeout=timeout,
            env=None if env is None else dict(env), stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        log.warning("the Claude CLI's version could not be read (%s)", type(exc).__name__)
        return None
    return parse_version(done.stdout) if done.returncode == 0 else None


def forget_versions() -> None:
    _known.clear()
