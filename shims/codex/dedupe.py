"""Servers the user's own Codex already runs are not mounted a second time.

Codex reads `config.toml` under `CODEX_HOME` (or `~/.codex`) and starts every enabled
`[mcp_servers.NAME]` there itself. A server of the bot's that the user's file already runs
the same way (a command server with the same command, arguments and environment; an
address server with the same address and headers) would otherwise appear twice, so it is
left out of the sidecar's config, on a turn without a tool selection (a selection is
enforced by the sidecar's gate, so there every server goes through it). The platform's
own built-in servers are always mounted. A file that cannot be read changes nothing.
"""

from __future__ import annotations

import logging
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["user_config_path", "running_signatures", "server_signature", "drop_running"]

log = logging.getLogger(__name__)

Signature = tuple[Any, ...]


def user_config_path(environ: Mapping[str, str]) -> Path:
    home = environ.get("CODEX_HOME")
    if home:
        return Path(home) / "config.toml"
    return Path(environ.get("HOME") or os.path.expanduser("~")) / ".codex" / "config.toml"


def _strings(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): str(v) for k, v in value.items()}


def _headers(entries: Mapping[str, str]) -> frozenset[tuple[str, str]]:
    return frozenset((name.lower(), value) for name, value in entries.items())


def server_signature(entry: Mapping[str, Any]) -> Signature | None:
    """What makes a sidecar `mcpServers` entry the same server as another."""
    url = entry.get("url")
    if isinstance(url, str):
        return ("url", url.rstrip("/"), _headers(_strings(entry.get("headers"))))
    command = entry.get("command")
    if not isinstance(command, str):
        return None
    args = entry.get("args") or []
    return ("command", command, tuple(str(a) for a in args), frozenset(_strings(entry.get("env")).items()))


def _codex_signature(entry: Mapping[str, Any], environ: Mapping[str, str]) -> Signature | None:
    """The same for one of Codex's own `[mcp_servers.NAME]` tables, its variables resolved."""
    if entry.get("enabled", True) is False:
        return None
    url = entry.get("url")
    if isinstance(url, str):
        headers = _strings(entry.get("http_headers"))
        for header, variable in _strings(entry.get("env_http_headers")).items():
            if variable in environ:
                headers[header] = environ[variable]
        token = entry.get("bearer_token_env_var")
        if isinstance(token, str) and token in environ:
            headers["Authorization"] = f"Bearer {environ[token]}"
        return ("url", url.rstrip("/"), _headers(headers))
    env = _strings(entry.get("env"))
    for name in entry.get("env_vars") or []:
        if isinstance(name, str) and name in environ:
            env.setdefault(name, environ[name])
    return server_signature({"command": entry.get("command"), "args": entry.get("args"), "env": env})


def running_signatures(path: Path, environ: Mapping[str, str]) -> set[Signature]:
    """The servers the user's Codex config starts; none when the file is absent or unreadable."""
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return set()
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        log.warning("the user's Codex config could not be read (%s): every server is mounted", type(exc).__name__)
        return set()
    servers = document.get("mcp_servers")
    if not isinstance(servers, Mapping):
        return set()
    found = (_codex_signature(e, environ) for e in servers.values() if isinstance(e, Mapping))
    return {s for s in found if s is not None}


def drop_running(servers: Mapping[str, dict[str, Any]], running: set[Signature],
                 has_selection: bool) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The bot's servers less those Codex runs itself: (kept, dropped aliases)."""
    if has_selection or not running:
        return dict(servers), []
    kept: dict[str, dict[str, Any]] = {}
    dropped: list[str] = []
    for alias, entry in servers.items():
        if entry.get("builtin") is not True and server_signature(entry) in running:
            dropped.append(alias)
        else:
            kept[alias] = entry
    return kept, dropped
