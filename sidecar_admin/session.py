"""One admin command's session, and the check that turns an entry on.

Owns what every `omb-sidecar add | import | check | servers | signin` run shares: the
config file named by `--config`, the config parsed from it (its source set, so the
health file sits beside it), the redactor that holds every configured env, header and
client secret value, and the output (sentences, or JSON with `--json`). `check_and_apply`
is the "Test" as the commands run it: check one entry, keep the result in the health
file, and turn the entry on when it passed and was not changed meanwhile.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

import anyio

from sidecar.trust.pins import Approval
from sidecar.config import ServerConfig, SidecarConfig, parse_config, parse_server, placed
from sidecar.errors import ConfigError
from sidecar.mounts.health import CheckResult, HealthFile, fingerprint, health_file_for, record_start
from sidecar.redact import Redactor, url_credentials
from sidecar.upstream.oauth import where
from sidecar_admin import views
from sidecar_admin.check import check_server, refused, tool_caps
from sidecar_admin.importer import ImportResult, import_paste
from sidecar_admin.store import ConfigFile

__all__ = ["CREATING_COMMANDS", "Session", "add_paste_to_file", "all_values", "check_and_apply", "other_tools",
           "say_each_line_once"]

CREATING_COMMANDS = ("add", "import")  # a missing config file is where these start one


class _SaidOnce(logging.Filter):
    """Drops a log line already said: a command reads its config more than once (the whole
    file, then the entry it works on), and a person should read each warning once."""

    def __init__(self) -> None:
        super().__init__()
        self.said: set[tuple[str, int, str]] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, record.levelno, record.getMessage())
        if key in self.said:
            return False
        self.said.add(key)
        return True


def say_each_line_once() -> None:
    """On the log handler `setup_logging` installed: each distinct line once per command."""
    for handler in logging.getLogger().handlers:
        handler.addFilter(_SaidOnce())


class Session:
    """One command's config file, parsed config, redactor and output."""

    def __init__(self, args: argparse.Namespace, redactor: Redactor) -> None:
        self.args = args
        self.file = ConfigFile(args.config, may_be_new=args.word in CREATING_COMMANDS)
        self.redactor = redactor  # the same one the log handler uses
        self.config = self.reload()
        where.use(self.config, redactor)  # a signed-in server is checked with its tokens
        where.keep_refusals(record_start)

    def reload(self) -> SidecarConfig:
        document = self.file.read()
        self.redactor.add(all_values(document))
        config = parse_config(document, os.environ)
        self.config = placed(config, str(self.file.path))
        return self.config

    def say(self, lines: Sequence[str]) -> None:
        sys.stdout.write(self.redactor("\n".join(lines)) + "\n")

    def say_json(self, value: object) -> None:
        sys.stdout.write(self.redactor(json.dumps(value, indent=2)) + "\n")

    def answer(self, lines: Sequence[str], value: object) -> None:
        """Sentences, or the JSON value with `--json`."""
        if self.args.json:
            self.say_json(value)
        else:
            self.say(lines)

    def health(self) -> HealthFile | None:
        return health_file_for(self.config)


def add_paste_to_file(session: Session, paste: str) -> ImportResult:
    """`omb-sidecar add PASTE`'s write, shared by the command and the console: the paste's
    entries join the config file (each off), their values join the redactor first."""
    with session.file.edit() as document:
        servers = document.setdefault("mcpServers", {})
        if not isinstance(servers, dict):
            raise ConfigError("mcpServers", "must be an object of alias -> server entry")
        result = import_paste(paste, servers, session.config.organization)
        session.redactor.add(all_values({"mcpServers": {a.name: a.entry for a in result.added}}))
        for added in result.added:
            servers[added.name] = added.entry
    return result


def all_values(document: dict[str, Any]) -> list[str]:
    found: list[str] = []
    block = document.get("mcpServers")
    for entry in (block or {}).values() if isinstance(block, dict) else ():
        for key in ("env", "headers"):
            values = entry.get(key) if isinstance(entry, dict) else None
            if isinstance(values, dict):
                found += [v for v in values.values() if isinstance(v, str) and v]
        url = entry.get("url") if isinstance(entry, dict) else None
        found += url_credentials(url) if isinstance(url, str) else []  # `?key=...`, user:password@
        oauth = entry.get("oauth") if isinstance(entry, dict) else None
        if isinstance(oauth, dict) and isinstance(oauth.get("clientSecret"), str) and oauth["clientSecret"]:
            found.append(oauth["clientSecret"])
    return found


def check_and_apply(session: Session, name: str, say: bool = True, approval: Approval | None = None) -> CheckResult:
    """Check one entry, keep the result, turn the entry on when it passed and is unchanged.
    Its pins change only with `approval` (a person ran `check` on it)."""
    entry = session.file.servers().get(name)
    if entry is None:
        raise ConfigError("", f"there is no server named '{name}'")
    server = parse_server(name, entry)
    was_on = entry.get("enabled", True) is not False
    if not session.config.organization.admits(server):
        org = session.config.organization.name or "the organization"
        result = refused(name, "not-allowed", f"'{name}' is not on {org}'s approved list")
    else:
        others = other_tools(session, name)
        caps = tool_caps(session.config)
        result = anyio.run(lambda: check_server(server, tool_cap=session.config.budgets.tool_cap, others=others, caps=caps,
                                                probe_calls=True))
    now_on = _apply(session, server, result, was_on, approval)
    if say:
        session.answer(views.check_lines(result, was_on, now_on, session.config.health.retry_failed_seconds),
                       {**views.check_json(result), "name": name, "enabled": now_on})
    return result


def other_tools(session: Session, name: str) -> dict[str, list[str]]:
    health = session.health()
    records = health.load() if health is not None else {}
    return {alias: r.tool_names for alias, r in records.items() if r.ok and alias != name}


def _apply(session: Session, checked: ServerConfig, result: CheckResult, was_on: bool,
           approval: Approval | None) -> bool:
    health = session.health()
    if health is not None and result.outcome not in ("needs-values", "not-allowed"):
        health.record(checked, result, approval=approval)
    if not result.ok:
        return was_on
    with session.file.edit() as document:
        entry = document.get("mcpServers", {}).get(checked.alias)
        if not isinstance(entry, dict):
            return False
        try:
            unchanged = fingerprint(parse_server(checked.alias, entry)) == fingerprint(checked)
        except ConfigError:
            unchanged = False
        if unchanged:
            entry.pop("enabled", None)
        return unchanged
