"""The Claude Code settings files a bridged turn depends on, found and read defensively.

Owns which files the CLI reads for a turn launched with `--setting-sources project` (the
turn folder's `.claude/settings.json` and `.claude/settings.local.json`; the machine's
managed policy for Linux, macOS or Windows, each with every `*.json` in the
`managed-settings.d` folder beside it), and reading one: a file that is not a regular file
is refused without being opened, one over 1 MB without being read, and what is read must
be JSON. Objects are kept as lists of (key, value) pairs, so a key given twice is seen
twice. Refuses nothing about the content: the rules live in `refusal`.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "SIZE_LIMIT",
    "JsonObject",
    "Settings",
    "Unreadable",
    "project_settings",
    "managed_settings",
    "read_settings",
]

SIZE_LIMIT = 1024 * 1024  # larger files are refused unread

# The managed policy's folders, per platform (the CLI reads its own platform's).
MANAGED_FOLDERS: dict[str, tuple[str, ...]] = {
    "linux": ("/etc/claude-code",),
    "darwin": ("/Library/Application Support/ClaudeCode",),
    "win32": ("C:/Program Files/ClaudeCode", "C:/ProgramData/ClaudeCode"),
}
MANAGED_FILE = "managed-settings.json"
DROP_IN_FOLDER = "managed-settings.d"


class Unreadable(Exception):
    """A settings file is there but cannot be read as settings (the message says why)."""


class JsonObject(list[tuple[str, Any]]):
    """A JSON object as its (key, value) pairs, in order, duplicates kept."""


@dataclass(frozen=True)
class Settings:
    path: Path
    managed: bool
    text: str
    tree: Any  # decoded JSON, objects as JsonObject


def project_settings(folder: Path) -> list[Path]:
    """The project settings files the CLI reads for a turn run in `folder`."""
    return [folder / ".claude" / "settings.json", folder / ".claude" / "settings.local.json"]


def _platform_key(platform: str) -> str:
    if platform.startswith("win"):
        return "win32"
    return "darwin" if platform == "darwin" else "linux"


def _under(root: Path | None, folder: str) -> Path:
    return Path(folder) if root is None else root / folder.lstrip("/")


def managed_settings(platform: str, root: Path | None = None) -> Iterator[Path]:
    """The managed policy files for `platform`, each followed by its drop-ins in name
    order. `root` puts the machine's folders under another folder (for tests). A
    `managed-settings.d` that is there but is not a folder raises Unreadable."""
    for folder in MANAGED_FOLDERS[_platform_key(platform)]:
        base = _under(root, folder)
        yield base / MANAGED_FILE
        yield from _drop_ins(base / DROP_IN_FOLDER)


def _drop_ins(folder: Path) -> Iterator[Path]:
    try:
        mode = os.stat(folder).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise Unreadable(f"{folder} cannot be examined ({exc.strerror})") from None
    if not stat.S_ISDIR(mode):
        raise Unreadable(f"{folder} is not a folder")
    try:
        names = sorted(e.name for e in os.scandir(folder))
    except OSError as exc:
        raise Unreadable(f"{folder} cannot be listed ({exc.strerror})") from None
    for name in names:
        if name.lower().endswith(".json"):
            yield folder / name


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def read_settings(path: Path, managed: bool = False) -> Settings | None:
    """Read one settings file: None when there is none, Unreadable when it is there but
    cannot be read as settings (not a regular file, over the limit, not JSON)."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Unreadable(f"{path} cannot be examined ({exc.strerror})") from None
    try:
        info = os.stat(path)
    except OSError as exc:
        raise Unreadable(f"{path} cannot be examined ({exc.strerror})") from None
    _check_kind(path, info)
    data = _read_bounded(path)
    try:
        text = data.decode("utf-8")
        tree = json.loads(text, object_pairs_hook=JsonObject, parse_constant=_reject_constant)
    except ValueError:
        raise Unreadable(f"{path} is not JSON") from None
    return Settings(path, managed, text, tree)


def _check_kind(path: Path, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise Unreadable(f"{path} is not a regular file")
    if info.st_size > SIZE_LIMIT:
        raise Unreadable(f"{path} is larger than 1 MB")


def _read_bounded(path: Path) -> bytes:
    # O_NONBLOCK: should the file have been swapped for a FIFO since the check, opening it
    # does not wait for a writer; fstat then sees what was really opened.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise Unreadable(f"{path} cannot be opened ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        _check_kind(path, os.fstat(fd))
        data = handle.read(SIZE_LIMIT + 1)
    if len(data) > SIZE_LIMIT:
        raise Unreadable(f"{path} is larger than 1 MB")
    return data
