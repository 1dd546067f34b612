"""One paste in, named and checked `mcpServers` entries out (`omb-sidecar add`).

Owns: reading each server of a paste into the sidecar's entry shape, blanking every value
that was a shell variable or a placeholder (and saying what still needs a value), naming
(the rules, `mcp-` before a reserved name, a number when a name is taken), leaving out a
server that is already configured, and the organization's approved list. Refuses a
server it cannot read, or one the rules refuse: it drops only that one and says why.

Entries always come in off (`enabled: false`), whatever the paste said: a check turns
them on. Nothing here prints or logs a value: results carry names only.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sidecar.config import Organization, ServerConfig, parse_server, rules
from sidecar.errors import ConfigError
from sidecar_admin.forms import read_paste
from sidecar_admin.shell import Candidate, Unreadable, name_from_entry

__all__ = ["Added", "Dropped", "ImportResult", "Need", "import_paste", "blank_reason"]

_VARIABLE = re.compile(r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|%[A-Za-z_][A-Za-z0-9_]*%|^~(?=/|$)")
_PLACEHOLDER = re.compile(
    r"<[^<>\n]{1,64}>|(?<![a-z0-9])your[_-]|[_-]here(?![a-z0-9])|x{4,}|\*{4,}|\.\.\.|…|\{\{[^}]*\}\}"
    r"|replace[_-]?(?:me|with|this)|(?:^|/)path/to(?:/|$)|^(?:todo|tbd|fixme|placeholder|changeme|change[_-]me"
    r"|redacted|token|api[_-]?key|secret|password|key|value|bearer)$",
    re.IGNORECASE,
)
_BEARER_PLACEHOLDER = re.compile(r"^bearer\s*$", re.IGNORECASE)
_STDIO_TYPES = {"stdio": "stdio", "local": "stdio"}
_URL_TYPES = {"http": "http", "streamable-http": "http", "streamablehttp": "http", "streamable_http": "http",
              "remote": "http", "sse": "sse"}
_BUILTIN_KEYS = ("builtin", "alwaysListed", "directOnly")


@dataclass(frozen=True)
class Need:
    """A value the paste left out: `where` is env, header or argument; `why` says how we know."""

    where: str
    key: str
    why: str

    def __str__(self) -> str:
        return f"{self.where} {self.key} ({self.why})"


@dataclass
class Added:
    name: str
    entry: dict[str, Any]
    needs: list[Need] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Dropped:
    label: str
    reason: str

    def __str__(self) -> str:
        return f"{self.label}: {self.reason}"


@dataclass
class ImportResult:
    added: list[Added] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def blank_reason(value: str) -> str | None:
    """Why `value` cannot be saved as written (a variable or a placeholder), or None."""
    variables = _VARIABLE.findall(value)
    if variables:
        return "it used " + ", ".join(dict.fromkeys(variables))
    if _PLACEHOLDER.search(value.strip()) or _BEARER_PLACEHOLDER.match(value.strip()):
        return "it was a placeholder"
    return None


def import_paste(
    text: str,
    existing: Mapping[str, object] | None = None,
    organization: Organization | None = None,
) -> ImportResult:
    """Read a paste against the entries already configured (`existing`: mcpServers)."""
    existing = existing or {}
    taken = set(existing)
    known = _known_keys(existing)
    result = ImportResult()
    for found in read_paste(text):
        if isinstance(found, Unreadable):
            result.dropped.append(Dropped(found.label, found.reason))
            continue
        try:
            added = _admit(found, taken, known, organization or Organization())
        except _Refused as refused:
            result.dropped.append(Dropped(found.label, refused.reason))
            continue
        taken.add(added.name)
        result.added.append(added)
    return result


def _known_keys(existing: Mapping[str, object]) -> dict[tuple[object, ...], str]:
    known: dict[tuple[object, ...], str] = {}
    for name, entry in existing.items():
        try:
            server = parse_server(name, entry)
        except ConfigError:
            continue
        known.setdefault(_key_of(server), name)
    return known


def _key_of(server: ServerConfig) -> tuple[object, ...]:
    return rules.mount_key(server.command, server.args, server.env, server.cwd, server.url, server.headers)


def _admit(
    found: Candidate, taken: set[str], known: dict[tuple[object, ...], str], organization: Organization
) -> Added:
    entry, needs, notes = _entry_of(found.raw)
    notes = found.notes + notes
    name = _name_for(found.name, entry, taken, notes)
    try:
        server = parse_server(name, entry)
    except ConfigError as exc:
        raise _Refused(exc.problem) from None
    same = known.get(_key_of(server))
    if same is not None:
        raise _Refused(f"already here as '{same}'")
    if not organization.admits(server):
        raise _Refused(f"not on {organization.name or 'the organization'}'s approved list")
    known[_key_of(server)] = name
    return Added(name, entry, needs, notes)


# -- the entry ------------------------------------------------------------------------------


def _entry_of(raw: dict[str, Any]) -> tuple[dict[str, Any], list[Need], list[str]]:
    needs: list[Need] = []
    notes = _ignored_notes(raw)
    kind, url = _connection(raw)
    entry: dict[str, Any] = {}
    if kind == "stdio":
        command, args = _command(raw)
        env = _strings(raw.get("env"), "env")
        args = _docker_env(command, args, env, notes)
        entry["command"] = command
        if args:
            entry["args"] = _blank_args(args, needs)
        if env:
            entry["env"] = _blank_values(env, "env", needs)
        cwd = _cwd(raw.get("cwd"), notes)
        if cwd:
            entry["cwd"] = cwd
    else:
        entry["type"] = kind
        entry["url"] = url
        headers = _strings(raw.get("headers"), "headers")
        if headers:
            entry["headers"] = _blank_values(headers, "header", needs)
    entry["enabled"] = False
    return entry, needs, notes


def _ignored_notes(raw: dict[str, Any]) -> list[str]:
    notes = []
    if any(key in raw for key in _BUILTIN_KEYS):
        notes.append("builtin, alwaysListed and directOnly are ignored: a pasted server is never built in")
    if "oauth" in raw:
        notes.append("its sign-in app settings (oauth) are not kept")
    if "envFile" in raw:
        notes.append("its envFile is not read: add those variables to env")
    return notes


def _connection(raw: dict[str, Any]) -> tuple[str, str | None]:
    """('stdio', None) or ('http'|'sse', address), from whichever keys the paste used."""
    declared = raw.get("type", raw.get("transport", raw.get("transportType")))
    url = next((raw[k] for k in ("url", "serverUrl", "httpUrl") if isinstance(raw.get(k), str)), None)
    command = raw.get("command")
    if url is not None and command:
        raise _Refused("it has both a command and an address")
    if command is not None and not isinstance(command, str):
        raise _Refused("its command must be text (put its arguments in args)")
    if declared is not None and not isinstance(declared, str):
        raise _Refused("its type must be stdio, http or sse")
    folded = declared.lower() if isinstance(declared, str) else None
    if folded is not None and folded not in _STDIO_TYPES and folded not in _URL_TYPES:
        raise _Refused(f"unknown type {declared!r} (stdio, http or sse)")
    if url is None:
        if folded in _URL_TYPES:
            raise _Refused(f"a {folded} server needs an address (url)")
        if not isinstance(command, str) or not command.strip():
            raise _Refused("it has neither a command nor an address")
        return "stdio", None
    if folded in _STDIO_TYPES:
        raise _Refused("a stdio server needs a command, not an address")
    reason = blank_reason(url)
    if reason is not None:
        raise _Refused(f"its address cannot be saved as written ({reason}): paste the real address")
    if folded is None or "httpUrl" in raw:
        return ("sse" if url.rstrip("/").lower().endswith("/sse") and "httpUrl" not in raw else "http"), url
    return _URL_TYPES[folded], url


def _command(raw: dict[str, Any]) -> tuple[str, list[str]]:
    command = str(raw["command"]).strip()
    args = raw.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, (str, int, float)) for a in args):
        raise _Refused("args must be a list of strings")
    args = [str(a) for a in args]
    if not args and any(c.isspace() for c in command):
        try:
            command, *args = shlex.split(command)
        except ValueError:
            raise _Refused("its command has unclosed quotes") from None
    reason = blank_reason(command)
    if reason is not None:
        raise _Refused(f"its command cannot be saved as written ({reason})")
    return command, args


def _strings(block: object, what: str) -> dict[str, str]:
    if block is None:
        return {}
    if not isinstance(block, dict):
        raise _Refused(f"{what} must be an object of names and values")
    values: dict[str, str] = {}
    for key, value in block.items():
        if value is None:
            values[str(key)] = ""
        elif isinstance(value, bool):
            values[str(key)] = "true" if value else "false"
        elif isinstance(value, (str, int, float)):
            values[str(key)] = str(value)
        else:
            raise _Refused(f"{what} values must be text")
    return values


def _blank_values(values: dict[str, str], where: str, needs: list[Need]) -> dict[str, str]:
    kept: dict[str, str] = {}
    for key, value in values.items():
        reason = "it was left blank" if value == "" else blank_reason(value)
        if reason is not None:
            needs.append(Need(where, key, reason))
            value = ""
        kept[key] = value
    return kept


def _blank_args(args: list[str], needs: list[Need]) -> list[str]:
    kept = []
    for index, arg in enumerate(args, 1):
        reason = blank_reason(arg)
        if reason is not None:
            needs.append(Need("argument", str(index), reason))
            arg = rules.NEEDS_VALUE
        kept.append(arg)
    return kept


def _docker_env(command: str, args: list[str], env: dict[str, str], notes: list[str]) -> list[str]:
    """`docker run -e NAME=value`: the value moves into the environment, off the command line;
    `-e NAME` alone passes a variable the sidecar does not have, so it becomes one to fill."""
    if command.replace("\\", "/").rsplit("/", 1)[-1] not in ("docker", "podman", "docker.exe"):
        return args
    out: list[str] = []
    moved: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        item = None
        if arg in ("-e", "--env") and i + 1 < len(args):
            item, i = args[i + 1], i + 1
        elif arg.startswith("--env="):
            item = arg.split("=", 1)[1]
        if item is None:
            out.append(arg)
        else:
            name, has_value, value = item.partition("=")
            if has_value:
                moved.append(name)
                env.setdefault(name, value)
            else:
                env.setdefault(name, f"${name}")  # docker would read it from the terminal's environment
            out += ["-e", name]
        i += 1
    if moved:
        notes.append("moved the value of " + ", ".join(moved) + " from the docker arguments into its environment")
    return out


def _cwd(cwd: object, notes: list[str]) -> str | None:
    if not isinstance(cwd, str) or not cwd:
        return None
    if blank_reason(cwd) is not None:
        notes.append(f"its working folder is left out ({blank_reason(cwd)})")
        return None
    return cwd


# -- the name -------------------------------------------------------------------------------


def _name_for(given: str | None, entry: dict[str, Any], taken: set[str], notes: list[str]) -> str:
    base = _tidy(given) if given else _tidy(name_from_entry(entry))
    if given and base != given:
        notes.append(f"named '{base}' (from {given!r})")
    if base in rules.RESERVED_NAMES:
        notes.append(f"named 'mcp-{base}': '{base}' is kept for the sidecar's own tools")
        base = f"mcp-{base}"[: rules.MAX_NAME]
    name = _numbered(base, taken)
    if name != base:
        notes.append(f"named '{name}': '{base}' is taken")
    return name


def _tidy(raw: str) -> str:
    """A name the rules accept: lowercase, `-` for anything else, a letter first, at most 32."""
    name = re.sub(r"[^a-z0-9_-]+", "-", raw.strip().lower())
    name = re.sub(r"-{2,}", "-", name).strip("-_")
    name = re.sub(r"_{2,}", "_", name)  # `__` separates a server from its tools
    if name and not name[0].isalpha():
        name = f"mcp-{name}"
    return name[: rules.MAX_NAME].rstrip("-_") or "server"


def _numbered(base: str, taken: Iterable[str]) -> str:
    used = set(taken)
    if base not in used:
        return base
    number = 2
    while True:
        suffix = f"-{number}"
        name = base[: rules.MAX_NAME - len(suffix)].rstrip("-_") + suffix
        if name not in used:
            return name
        number += 1
