"""The console's acts on the config file: add by paste, fill what a paste left out, Test.

Owns nothing new: each act is the command's own steps (`omb-sidecar add`'s parser and
write, `check`'s bounded check and its "turn it on when it passed"), run on an admin
`Session` of the config file the sidecar was started with. They block (the check runs
its own event loop), so the page runs them in a worker thread. Every value a person
types joins the process's redactor before anything is written or said.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sidecar.config import ServerConfig, parse_server, rules
from sidecar.errors import ConfigError
from sidecar.mounts.health import CheckResult
from sidecar.redact import Redactor
from sidecar_admin import views
from sidecar_admin.importer import ImportResult
from sidecar_admin.console.approval import check_as_person
from sidecar_admin.session import Session, add_paste_to_file

__all__ = ["Pasted", "Tested", "add_paste", "admin_session", "fill_values", "needs_of", "test_server"]


@dataclass
class Tested:
    name: str
    result: CheckResult
    lines: list[str]
    server: ServerConfig | None  # the entry as it now runs, when the check turned it on


@dataclass
class Pasted:
    result: ImportResult
    tested: list[Tested] = field(default_factory=list)


def admin_session(config_path: str, redactor: Redactor, **given: Any) -> Session:
    """An admin session as the commands open one, answering in JSON, never printing."""
    values: dict[str, Any] = {"config": config_path, "word": "console", "json": True, "paste": None, "no_check": False,
                              "no_browser": True, "name": None, "tool": None}
    values.update(given)
    return Session(argparse.Namespace(**values), redactor)


def _on(entry: object) -> bool:
    return isinstance(entry, dict) and entry.get("enabled", True) is not False


def test_server(session: Session, name: str) -> Tested:
    """`omb-sidecar check NAME`: the bounded check; a pass turns the entry on."""
    was_on = _on(session.file.servers().get(name))
    result = check_as_person(session, name)
    entry = session.file.servers().get(name)
    now_on = _on(entry)
    server = parse_server(name, entry) if result.ok and now_on and isinstance(entry, dict) else None
    return Tested(name, result, views.check_lines(result, was_on, now_on), server)


def add_paste(session: Session, paste: str) -> Pasted:
    """`omb-sidecar add PASTE`: new entries come in off; each with nothing to fill is tested."""
    result = add_paste_to_file(session, paste)
    pasted = Pasted(result)
    for added in result.added:
        if not added.needs:
            pasted.tested.append(test_server(session, added.name))
    return pasted


def needs_of(entry: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The blanks of an entry as (where, key): ('env', X), ('header', Y), ('argument', '2')."""
    env = entry.get("env") if isinstance(entry.get("env"), dict) else {}
    headers = entry.get("headers") if isinstance(entry.get("headers"), dict) else {}
    args = entry.get("args") if isinstance(entry.get("args"), list) else []
    assert isinstance(env, dict) and isinstance(headers, dict) and isinstance(args, list)
    words = rules.missing_values(None, [str(a) for a in args], {str(k): str(v) for k, v in env.items()},
                                 {str(k): str(v) for k, v in headers.items()})
    return [(w.partition(" ")[0], w.partition(" ")[2]) for w in words]


def fill_values(session: Session, name: str, values: Mapping[tuple[str, str], str]) -> Tested:
    """Write the values a paste left out (write-only: a blank leaves the blank), then Test."""
    given = {k: v for k, v in values.items() if v.strip()}
    session.redactor.add(v for v in given.values())
    with session.file.edit() as document:
        entry = document.get("mcpServers", {}).get(name)
        if not isinstance(entry, dict):
            raise ConfigError("", f"there is no server named '{name}'")
        for (where, key), value in given.items():
            _fill(entry, where, key, value)
        parse_server(name, entry)  # the rules, before anything is written
    return test_server(session, name)


def _fill(entry: dict[str, Any], where: str, key: str, value: str) -> None:
    if where in ("env", "header"):
        block = entry.setdefault("env" if where == "env" else "headers", {})
        if isinstance(block, dict) and block.get(key) == "":
            block[key] = value
    elif where == "argument" and key.isdigit():
        args = entry.get("args")
        index = int(key) - 1
        if isinstance(args, list) and 0 <= index < len(args) and args[index] == rules.NEEDS_VALUE:
            args[index] = value
