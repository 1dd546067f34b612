"""The config contract (SPEC §8): one JSON file in, typed, validated settings out.

Owns: reading the file, checking every key with its path, the environment overrides
(`OMB_MCP_RESULT_BUDGET`, `OMB_AGENTS_TOOL_BRIDGE`), and the list of secret values the
log redactor must hide. Refuses: unknown keys (reported, ignored), bad values (fatal in
the top-level sections, a skipped entry under `mcpServers`).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec

from sidecar.errors import ConfigError

__all__ = [
    "Bot",
    "Budgets",
    "Face",
    "Features",
    "Selection",
    "ServerConfig",
    "SidecarConfig",
    "load_config",
    "parse_config",
]

log = logging.getLogger(__name__)

Transport = Literal["stdio", "http", "sse"]
LayoutName = Literal["auto", "full", "bridged", "trio", "cap"]
_ALIAS = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


class Selection(msgspec.Struct, rename="camel", frozen=True):
    servers: list[str] | None = None
    tools: list[str] | None = None


class Bot(msgspec.Struct, rename="camel", frozen=True):
    id: str = "bot"
    engine: str = "claude"
    model_url: str | None = None
    selection: Selection | None = None


class Features(msgspec.Struct, rename="camel", frozen=True):
    agents_tool_bridge: bool = False


class Budgets(msgspec.Struct, rename="camel", frozen=True):
    result_chars: int = 8000
    held_bytes_per_server: int = 64 * 1024 * 1024
    tool_cap: int = 128


class Face(msgspec.Struct, rename="camel", frozen=True):
    """What the engine sees as one server: its registration name and layout."""

    name: str = "omb"
    layout: LayoutName = "auto"
    page_size: int = 1000
    # How long a `tools/list` may wait for upstreams still on their first start. 0 answers
    # at once (engines that follow list_changed); an engine that lists once wants more.
    list_wait_seconds: float = 0.0
    start_timeout_seconds: float = 8.0


class ServerConfig(msgspec.Struct, rename="camel", frozen=True):
    """One upstream entry, in the shape Claude Code, Cursor and Claude Desktop write."""

    alias: str = ""
    type: Transport = "stdio"
    command: str | None = None
    args: list[str] = []
    env: dict[str, str] = {}
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = {}
    enabled: bool = True
    builtin: bool = False
    always_listed: list[str] = []
    direct_only: list[str] = []
    start_timeout_seconds: float | None = None

    def secrets(self) -> list[str]:
        """Values that must never be shown: env values and header values."""
        return [v for v in (*self.env.values(), *self.headers.values()) if v]


class SidecarConfig(msgspec.Struct, frozen=True):
    bot: Bot = Bot()
    features: Features = Features()
    budgets: Budgets = Budgets()
    face: Face = Face()
    servers: tuple[ServerConfig, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()

    def secrets(self) -> list[str]:
        return [s for server in self.servers for s in server.secrets()]


_SECTIONS: dict[str, type[msgspec.Struct]] = {
    "bot": Bot,
    "features": Features,
    "budgets": Budgets,
    "face": Face,
}


def load_config(path: str | Path, environ: Mapping[str, str] | None = None) -> SidecarConfig:
    """Read and validate the config file at `path`."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError("", f"cannot read config file: {exc.strerror}") from None
    try:
        document = msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        raise ConfigError("", f"config file is not valid JSON ({exc})") from None
    return parse_config(document, os.environ if environ is None else environ)


def parse_config(document: object, environ: Mapping[str, str]) -> SidecarConfig:
    """Validate a decoded config document; env overrides applied last."""
    if not isinstance(document, dict):
        raise ConfigError("$", "the config must be a JSON object")
    sections: dict[str, Any] = {}
    for key, value in document.items():
        if key in _SECTIONS:
            sections[key] = _convert(value, _SECTIONS[key], key)
        elif key != "mcpServers":
            log.warning("config: unknown key %s ignored", key)
    servers, skipped = _parse_servers(document.get("mcpServers", {}))
    config = SidecarConfig(**sections, servers=servers, skipped=skipped)
    return _apply_environment(config, environ)


def _convert(value: object, kind: type[msgspec.Struct], path: str) -> Any:
    if isinstance(value, dict):
        known = {f.encode_name for f in msgspec.structs.fields(kind)}
        for key in value:
            if key not in known:
                log.warning("config: unknown key %s.%s ignored", path, key)
        value = {k: v for k, v in value.items() if k in known}
    try:
        return msgspec.convert(value, kind)
    except msgspec.ValidationError as exc:
        raise ConfigError(path, _located(str(exc), path)) from None


def _located(message: str, path: str) -> str:
    """Turn msgspec's '... - at `$.x`' into '... at `path.x`'."""
    return message.replace("`$", f"`{path}")


def _parse_servers(block: object) -> tuple[tuple[ServerConfig, ...], tuple[tuple[str, str], ...]]:
    if not isinstance(block, dict):
        raise ConfigError("mcpServers", "must be an object of alias -> server entry")
    servers: list[ServerConfig] = []
    skipped: list[tuple[str, str]] = []
    for alias, entry in block.items():
        try:
            server = _parse_server(alias, entry)
        except ConfigError as exc:
            log.warning("config: server entry skipped: %s", exc.message)
            skipped.append((alias, exc.message))
            continue
        if server.enabled:
            servers.append(server)
    return tuple(servers), tuple(skipped)


def _parse_server(alias: str, entry: object) -> ServerConfig:
    path = f"mcpServers.{alias}"
    if not _ALIAS.match(alias):
        raise ConfigError(path, "alias must be letters, digits, '_' or '-' (at most 64)")
    if not isinstance(entry, dict):
        raise ConfigError(path, "a server entry must be an object")
    entry = dict(entry, alias=alias)
    if entry.get("type") == "streamable-http":
        entry["type"] = "http"
    if "url" in entry and "type" not in entry:
        entry["type"] = "http"
    server: ServerConfig = _convert(entry, ServerConfig, path)
    if server.type == "stdio" and not server.command:
        raise ConfigError(path, "a stdio server needs `command`")
    if server.type != "stdio" and not server.url:
        raise ConfigError(path, f"a {server.type} server needs `url`")
    for name in server.env:
        if not name or "=" in name or "\0" in name:
            raise ConfigError(f"{path}.env", f"invalid environment variable name {name!r}")
    return server


def _apply_environment(config: SidecarConfig, environ: Mapping[str, str]) -> SidecarConfig:
    budget = environ.get("OMB_MCP_RESULT_BUDGET")
    if budget is not None:
        if not budget.isdigit() or int(budget) <= 0:
            log.warning("OMB_MCP_RESULT_BUDGET ignored: it must be a positive whole number")
        else:
            budgets = msgspec.structs.replace(config.budgets, result_chars=int(budget))
            config = msgspec.structs.replace(config, budgets=budgets)
    bridge = environ.get("OMB_AGENTS_TOOL_BRIDGE")
    if bridge in ("0", "1"):
        features = msgspec.structs.replace(config.features, agents_tool_bridge=bridge == "1")
        config = msgspec.structs.replace(config, features=features)
    return config
