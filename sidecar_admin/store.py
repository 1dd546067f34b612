"""The config file as the server commands change it: read, edit under a lock, and write
atomically with 0600 permissions (it holds header and environment values in plain text).

Owns: the raw document (key order and unknown keys kept), edited under the lock beside
it and replaced atomically (`sidecar.private_files`), write-only updates of env and
header values (a blank keeps the saved value, a missing name deletes it), and the edit
form that shows names with blank values and credential arguments masked (a masked
argument sent back keeps the saved one). Refuses to write anything but a JSON object,
and to follow the file's symlink away from its target.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sidecar.config import empty_config_words, missing_config_words
from sidecar.errors import ConfigError
from sidecar.private_files import lock_beside, write_private

__all__ = ["ConfigFile", "MASK", "SECRET_BLOCKS", "edit_form", "masked_args", "merge_write_only"]

SECRET_BLOCKS = ("env", "headers")
MASK = "[hidden]"
_CREDENTIAL_FLAG = re.compile(r"^--?[\w-]*(?:key|token|secret|password|passwd|auth|credential)[\w-]*$", re.I)


def masked_args(args: list[Any]) -> list[str]:
    """`--api-key X` -> `--api-key [hidden]`, `--token=X` -> `--token=[hidden]`."""
    shown: list[str] = []
    hide_next = False
    for arg in map(str, args):
        flag, has_value, _ = arg.partition("=")
        if hide_next and arg:
            shown.append(MASK)  # a blank stays blank: it is a value still to fill
        elif has_value and _CREDENTIAL_FLAG.match(flag):
            shown.append(f"{flag}={MASK}")
        else:
            shown.append(arg)
        hide_next = bool(_CREDENTIAL_FLAG.match(arg)) and not has_value
    return shown


class ConfigFile:
    """One config file on disk; `edit()` is the only way the commands change it. Missing or
    empty, it reads as a new config only for the commands that make one (`may_be_new`:
    add, import); for the others it is named as missing or empty."""

    def __init__(self, path: str | Path, may_be_new: bool = True) -> None:
        self.given = str(path)  # as the person typed it, for the sentences they read
        self.path = Path(os.path.realpath(Path(path).expanduser()))
        self.may_be_new = may_be_new

    def read(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            if self.may_be_new:
                return {}
            raise ConfigError("", missing_config_words(self.given)) from None
        except OSError as exc:
            raise ConfigError("", f"cannot read config file {self.given}: {exc.strerror}") from None
        if not text.strip():
            if self.may_be_new:
                return {}
            raise ConfigError("", empty_config_words(self.given))
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError("", f"config file is not valid JSON ({exc.msg} at line {exc.lineno})") from None
        if not isinstance(document, dict):
            raise ConfigError("$", "the config must be a JSON object")
        return document

    def servers(self) -> dict[str, Any]:
        block = self.read().get("mcpServers", {})
        return block if isinstance(block, dict) else {}

    @contextlib.contextmanager
    def edit(self) -> Iterator[dict[str, Any]]:
        """Lock, read, let the caller change the document, write it back if it changed."""
        with lock_beside(self.path):
            document = self.read()
            before = json.dumps(document, sort_keys=True)
            yield document
            if json.dumps(document, sort_keys=True) != before:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                write_private(self.path, (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode())


def merge_write_only(saved: dict[str, Any], edited: dict[str, Any]) -> dict[str, Any]:
    """`edited` wins, except that a blank env or header value keeps the saved one."""
    merged = dict(edited)
    for block in SECRET_BLOCKS:
        new = edited.get(block)
        old = saved.get(block)
        if not isinstance(new, dict):
            continue
        old = old if isinstance(old, dict) else {}
        merged[block] = {name: (old.get(name, "") if value in ("", None) else value) for name, value in new.items()}
    if isinstance(edited.get("args"), list) and isinstance(saved.get("args"), list):
        merged["args"] = _unmask(saved["args"], edited["args"])
    _keep_client_secret(saved, edited, merged)
    return merged


def _keep_client_secret(saved: dict[str, Any], edited: dict[str, Any], merged: dict[str, Any]) -> None:
    """`oauth.clientSecret` is write-only too: blank keeps the saved one, null removes it."""
    new, old = edited.get("oauth"), saved.get("oauth")
    if not isinstance(new, dict) or not isinstance(old, dict) or "clientSecret" not in old:
        return
    if new.get("clientSecret", "") == "":
        merged["oauth"] = {**new, "clientSecret": old["clientSecret"]}
    elif new.get("clientSecret") is None:
        merged["oauth"] = {k: v for k, v in new.items() if k != "clientSecret"}


def _unmask(saved: list[Any], edited: list[Any]) -> list[Any]:
    """An argument sent back exactly as the form masked it keeps the saved one."""
    shown = masked_args(saved)
    return [saved[i] if i < len(saved) and arg == shown[i] != saved[i] else arg for i, arg in enumerate(edited)]


def edit_form(entry: dict[str, Any]) -> dict[str, Any]:
    """The entry with every env and header value blanked, and credential arguments masked:
    what a person may see and edit (`merge_write_only` takes it back)."""
    form = dict(entry)
    if isinstance(entry.get("args"), list):
        form["args"] = masked_args(entry["args"])
    for block in SECRET_BLOCKS:
        values = entry.get(block)
        if isinstance(values, dict):
            form[block] = {name: "" for name in values}
    if isinstance(entry.get("oauth"), dict) and entry["oauth"].get("clientSecret"):
        form["oauth"] = {**entry["oauth"], "clientSecret": ""}
    return form
