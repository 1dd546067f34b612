"""Which form a paste takes, and the servers in it, in the order they were pasted.

Forms: JSON (an `mcpServers` block, a VS Code `servers` block or `mcp.servers`, a
name -> entry map, a single entry, a list of named entries; a fragment without its outer
braces; comments and trailing commas accepted), Codex `config.toml` (`[mcp_servers.*]`
tables), and lines (`claude mcp add …`, `claude mcp add-json …`, `codex mcp add …`, an
address, an `npx`/`uvx`/`docker run` line), several of them one per line.

Owns the split into candidates; refuses nothing silently: each part it cannot read
becomes an `Unreadable` naming where it was.
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

from sidecar_admin import jsonish
from sidecar_admin.shell import Candidate, Unreadable, logical_lines, read_line

__all__ = ["read_paste", "ENTRY_KEYS"]

Found = Candidate | Unreadable
# Keys that make an object one server entry rather than a map of them.
ENTRY_KEYS = frozenset({"command", "url", "serverUrl", "httpUrl", "type", "transport", "args"})
_TOML_TABLE = re.compile(r"^\s*\[\s*\"?mcp_servers\b|^\s*mcp_servers\s*[.=]", re.MULTILINE)
_JSON_FRAGMENT = re.compile(r'^\s*"[^"\n]+"\s*:\s*[{\[]')


def read_paste(text: str) -> list[Found]:
    text = text.strip().lstrip("\ufeff")
    if not text:
        return [Unreadable("the paste", "it is empty")]
    if _TOML_TABLE.search(text):
        return _read_toml(text)
    if text[0] in "{[" or _JSON_FRAGMENT.match(text):
        return _read_json(text)
    return [read_line(number, line) for number, line in logical_lines(text)] or [
        Unreadable("the paste", "it holds only comments")
    ]


# -- JSON -------------------------------------------------------------------------------


def _read_json(text: str) -> list[Found]:
    try:
        document = jsonish.loads(text)
    except jsonish.JSONProblem as first:
        try:
            document = jsonish.loads("{" + text.rstrip().rstrip(",") + "}")
        except jsonish.JSONProblem:
            return [Unreadable("the paste", f"its JSON could not be read ({first})")]
    if isinstance(document, list):
        return _from_list(document)
    if not isinstance(document, dict):
        return [Unreadable("the paste", "its JSON is not an object")]
    return _from_object(document)


def _from_object(document: dict[str, Any]) -> list[Found]:
    for key in ("mcpServers", "servers", "mcp_servers", "context_servers"):
        if isinstance(document.get(key), dict):
            return _from_map(document[key])
    mcp = document.get("mcp")
    if isinstance(mcp, dict) and isinstance(mcp.get("servers"), dict):
        return _from_map(mcp["servers"])
    if ENTRY_KEYS & document.keys():
        name = document.get("name")
        return [Candidate("the paste", document, name if isinstance(name, str) else None)]
    if not document:
        return [Unreadable("the paste", "it holds no servers")]
    return _from_map(document)


def _from_map(block: dict[str, Any]) -> list[Found]:
    found: list[Found] = []
    for name, entry in block.items():
        label = f"'{name}'"
        if isinstance(entry, dict):
            found.append(Candidate(label, entry, str(name)))
        else:
            found.append(Unreadable(label, "a server entry must be an object"))
    return found or [Unreadable("the paste", "it holds no servers")]


def _from_list(items: list[Any]) -> list[Found]:
    found: list[Found] = []
    for index, item in enumerate(items, 1):
        name = item.get("name") if isinstance(item, dict) else None
        label = f"'{name}'" if isinstance(name, str) else f"entry {index}"
        if isinstance(item, dict):
            found.append(Candidate(label, item, name if isinstance(name, str) else None))
        else:
            found.append(Unreadable(label, "a server entry must be an object"))
    return found or [Unreadable("the paste", "it holds no servers")]


# -- Codex config.toml ----------------------------------------------------------------------


def _read_toml(text: str) -> list[Found]:
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return [Unreadable("the paste", f"its TOML could not be read ({exc})")]
    block = document.get("mcp_servers")
    if not isinstance(block, dict) or not block:
        return [Unreadable("the paste", "it has no [mcp_servers.NAME] tables")]
    found: list[Found] = []
    for name, table in block.items():
        label = f"'{name}'"
        if not isinstance(table, dict):
            found.append(Unreadable(label, "a [mcp_servers.NAME] entry must be a table"))
            continue
        found.append(Candidate(label, _codex_entry(table), str(name)))
    return found


def _codex_entry(table: dict[str, Any]) -> dict[str, Any]:
    """Codex's keys in the `mcpServers` shape; token variables become headers to fill."""
    entry = {k: v for k, v in table.items() if k in ("command", "args", "env", "cwd", "url")}
    headers: dict[str, Any] = _table(table, "http_headers")
    for header, variable in _table(table, "env_http_headers").items():
        headers[header] = f"${variable}"
    if isinstance(table.get("bearer_token_env_var"), str):
        headers["Authorization"] = f"Bearer ${table['bearer_token_env_var']}"
    if headers:
        entry["headers"] = headers
    variables = table.get("env_vars")
    if isinstance(variables, list) and isinstance(entry.get("env", {}), dict):
        env = dict(entry.get("env") or {})
        for variable in variables:
            if isinstance(variable, str):
                env.setdefault(variable, f"${variable}")
        if env:
            entry["env"] = env
    return entry


def _table(table: dict[str, Any], key: str) -> dict[str, Any]:
    value = table.get(key)
    return dict(value) if isinstance(value, dict) else {}
