"""Codex CLI with the sidecar as one of its MCP servers, registered by `-c` overrides.

`prepare_codex(settings, options)` writes the sidecar config (0600, in a private folder)
and returns the `Launch`:

    codex -c mcp_servers.<face>.command="…" -c mcp_servers.<face>.args=[…, "--config", "…"]
          -c mcp_servers.<face>.env_vars=["OMB_…"] -c mcp_servers.<face>.required=true
          -c mcp_servers.<face>.startup_timeout_sec=N
          -c mcp_servers.<face>.tools.<tool>.approval_mode="approve"   (one per approved tool)
          <engine args>

Only variable *names* go on argv (`env_vars`); their values travel in the engine's
environment, and the upstreams' own secrets stay in the 0600 sidecar config. `required`
makes a slow start an error instead of a silent loss, and the sidecar's first
`tools/list` waits for its upstreams (Codex lists once). Approval by kind: the built-in
catalog's tools, the servers the person approved and `query_result` are approved; every
other tool is left to Codex's own approval policy (asked for on request). Never bridged.
Servers the user's own `config.toml` already runs are not mounted twice (`dedupe`).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from shims.codex.dedupe import drop_running, running_signatures, user_config_path
from shims.launch import (
    Launch,
    check_document,
    enabled_servers,
    engine_document,
    face_name,
    private_folder,
    sidecar_command,
    write_private_json,
)
from shims.probe import ProbeError, face_tool_names

__all__ = ["CodexOptions", "prepare_codex", "FORWARDED_VARIABLES"]

log = logging.getLogger(__name__)

QUERY_RESULT = "query_result"
# Variables of the engine's environment the sidecar reads, forwarded by name when set.
FORWARDED_VARIABLES = ("OMB_LOG_LEVEL", "OMB_MCP_RESULT_BUDGET")


@dataclass(frozen=True)
class CodexOptions:
    """The engine side of a Codex turn."""

    args: Sequence[str] = ()  # the engine's own arguments: exec, the prompt, -m, ...
    signin: Literal["api", "chatgpt"] = "api"  # how Codex signs in: its own key, or a ChatGPT plan
    approved_servers: Sequence[str] = ()  # servers whose tools the person approved for this bot
    executable: str = "codex"
    sidecar: Sequence[str] | None = None
    list_wait_seconds: float = 10.0
    environ: Mapping[str, str] | None = None  # the engine's base environment (default: os.environ)
    forwarded: Sequence[str] = FORWARDED_VARIABLES
    temp_parent: str | None = None


def toml_value(value: Any) -> str:
    """A TOML value for a `-c` override (JSON strings and arrays of strings are valid TOML)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, ensure_ascii=True)


def _engine(options: CodexOptions) -> str:
    return "codex-chatgpt" if options.signin == "chatgpt" else "codex"


def approved_tool_names(settings: Mapping[str, Any], servers: Mapping[str, dict[str, Any]], options: CodexOptions,
                        command: Sequence[str], folder: Path, env: Mapping[str, str]) -> list[str]:
    """The face's names of the tools approved by kind, asked of the sidecar itself."""
    approved = {a: e for a, e in servers.items() if e.get("builtin") is True or a in options.approved_servers}
    if not approved:
        return []
    probe = engine_document(settings, _engine(options), {"layout": "full", "listWaitSeconds": options.list_wait_seconds},
                            servers=approved)
    path = write_private_json(folder / "probe.json", probe)
    try:
        return face_tool_names(command, path, env, timeout=options.list_wait_seconds + 20)
    except (ProbeError, OSError) as exc:
        log.warning("the approved tools' names could not be read (%s): none is approved ahead", type(exc).__name__)
        return []
    finally:
        path.unlink(missing_ok=True)


def prepare_codex(settings: Mapping[str, Any], options: CodexOptions = CodexOptions()) -> Launch:
    """Write the turn's files and return the Codex launch (see the module's text)."""
    environ = dict(os.environ if options.environ is None else options.environ)
    face = face_name(settings)
    bot = settings.get("bot")
    has_selection = isinstance(bot, Mapping) and bot.get("selection") is not None
    running = running_signatures(user_config_path(environ), environ)
    servers, dropped = drop_running(enabled_servers(settings), running, has_selection)
    folder = private_folder("omb-codex-", options.temp_parent)
    try:
        return _write_launch(settings, options, environ, face, servers, dropped, folder)
    except BaseException:
        Launch([], {}, None, folder, folder).cleanup()
        raise


def _write_launch(settings: Mapping[str, Any], options: CodexOptions, environ: dict[str, str], face: str,
                  servers: dict[str, dict[str, Any]], dropped: list[str], folder: Path) -> Launch:
    command = sidecar_command(options.sidecar)
    notes = [f"not mounted, the user's Codex runs it: {alias}" for alias in dropped]
    face_keys = {"name": face, "layout": "auto", "listWaitSeconds": options.list_wait_seconds}
    document = engine_document(settings, _engine(options), face_keys, {"agentsToolBridge": False}, servers=servers)
    check_document(document)
    config = write_private_json(folder / "sidecar.json", document)
    argv = [options.executable]
    if servers:
        approved = approved_tool_names(settings, servers, options, command, folder, environ)
        argv += _overrides(face, command, config, options, environ, [*approved, QUERY_RESULT])
    else:
        notes.append("no server left to mount: the sidecar is not registered")
    argv += list(options.args)
    return Launch(argv, environ, None, folder, config, tuple(notes), {"dropped": dropped})


def _overrides(face: str, command: Sequence[str], config: Path, options: CodexOptions,
               environ: Mapping[str, str], approved: Sequence[str]) -> list[str]:
    key = f"mcp_servers.{face}"
    settings: list[tuple[str, Any]] = [
        (f"{key}.command", command[0]),
        (f"{key}.args", [*command[1:], "--config", str(config)]),
        (f"{key}.required", True),
        (f"{key}.startup_timeout_sec", int(options.list_wait_seconds + 20)),
    ]
    forwarded = [name for name in options.forwarded if name in environ]
    if forwarded:
        settings.append((f"{key}.env_vars", forwarded))
    settings += [(f"{key}.tools.{name}.approval_mode", "approve") for name in dict.fromkeys(approved)]
    argv: list[str] = []
    for name, value in settings:
        argv += ["-c", f"{name}={toml_value(value)}"]
    return argv
