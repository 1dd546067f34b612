"""Claude Code with the sidecar as its one MCP server.

`prepare_claude(settings, options)` writes, into a private folder, the sidecar config and
a 0600 `--mcp-config` file registering the sidecar under the face's name, decides the
bridge (`refusal.claude_bridge`), and returns the `Launch`:

    claude --mcp-config FILE --strict-mcp-config --setting-sources project
           --allowedTools <pre-allowed> [--tools ...] [--disallowedTools ...] <engine args>

Pre-allowed: every tool of the built-in catalog (the `builtin: true` servers), `find_tool`
and `use_tool` when the face is bridged (they then cover nothing but built-in tools), and
`query_result`; never a tool of a server the person added. The built-in tools' names are
the sidecar's own, asked of it before the turn (`shims.probe`). Claude Code is made to
wait for the sidecar's tools (`MCP_CONNECTION_NONBLOCKING=0`, `MCP_TIMEOUT`), and the
sidecar's first `tools/list` waits for its upstreams (`face.listWaitSeconds`).

With the user's own Claude setup inherited, `--strict-mcp-config` and `--setting-sources`
are left out (the CLI then reads the person's settings and servers) and nothing is bridged.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shims.claude.refusal import (
    INHERIT_VARIABLE,
    BridgeDecision,
    BridgeTurn,
    bridge_switch,
    claude_bridge,
)
from shims.claude.version import Version, claude_version, has_setting_sources
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

__all__ = ["ClaudeOptions", "prepare_claude", "builtin_tool_names"]

log = logging.getLogger(__name__)

QUERY_RESULT = "query_result"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
BRIDGE_TOOLS = ("find_tool", "use_tool")


@dataclass(frozen=True)
class ClaudeOptions:
    """The engine side of a Claude Code turn."""

    args: Sequence[str] = ()  # the engine's own arguments: -p, the prompt, output format, ...
    tools: Sequence[str] = ()  # passed as --tools, as written
    disallowed_tools: Sequence[str] = ()  # passed as --disallowedTools, as written
    folder: str | None = None  # the turn's folder (None: the home folder)
    inherit_user_config: bool = False  # also use the machine's own Claude Code setup
    executable: str = "claude"
    sidecar: Sequence[str] | None = None  # the sidecar's command (default: sidecar_command())
    list_wait_seconds: float = 10.0  # the sidecar's first tools/list waits this long at most
    environ: Mapping[str, str] | None = None  # the engine's base environment (default: os.environ)
    cli_version: Version | None = None  # known already; None: ask `claude --version`
    platform: str = field(default_factory=lambda: sys.platform)
    managed_root: Path | None = None  # the machine's folders under another folder (tests)
    temp_parent: str | None = None  # where the private folder is made


def _inherits(options: ClaudeOptions, environ: Mapping[str, str]) -> bool:
    return options.inherit_user_config or environ.get(INHERIT_VARIABLE) == "1"


def _turn_folder(options: ClaudeOptions, environ: Mapping[str, str]) -> Path:
    if options.folder:
        return Path(options.folder)
    return Path(environ.get("HOME") or os.path.expanduser("~"))


def decide(settings: Mapping[str, Any], options: ClaudeOptions, environ: Mapping[str, str],
           version: Version | None) -> BridgeDecision:
    """The bridge decision for this turn (see `refusal`)."""
    bot = settings.get("bot")
    turn = BridgeTurn(
        switch_on=bridge_switch(settings, environ),
        server=face_name(settings),
        folder=_turn_folder(options, environ),
        cli_version=version,
        has_selection=isinstance(bot, Mapping) and bot.get("selection") is not None,
        inherits_user_config=_inherits(options, environ),
        tools=tuple(options.tools),
        disallowed_tools=tuple(options.disallowed_tools),
        platform=options.platform,
        managed_root=options.managed_root,
    )
    return claude_bridge(turn)


def builtin_tool_names(settings: Mapping[str, Any], command: Sequence[str], folder: Path,
                       env: Mapping[str, str], wait: float) -> tuple[list[str], bool]:
    """The face's names of the built-in catalog's tools, from the sidecar itself, and
    whether every built-in server answered (when one did not, nothing is bridged: its
    tools would sit behind use_tool without being pre-allowed)."""
    builtin = {a: e for a, e in enabled_servers(settings).items() if e.get("builtin") is True}
    if not builtin:
        return [], True
    probe = engine_document(settings, "claude", {"layout": "full", "listWaitSeconds": wait},
                            {"agentsToolBridge": False}, servers=builtin)
    path = write_private_json(folder / "probe.json", probe)
    try:
        names = face_tool_names(command, path, env, timeout=wait + 20)
    except (ProbeError, OSError) as exc:
        log.warning("the built-in catalog's tool names could not be read (%s)", type(exc).__name__)
        return [], False
    finally:
        path.unlink(missing_ok=True)
    silent = [alias for alias in builtin if not any(n.startswith(f"{_UNSAFE.sub('_', alias)}__") for n in names)]
    if silent:
        log.warning("built-in servers listed no tools in time: %s", ", ".join(silent))
    return names, not silent


def _allowed(face: str, builtin: Sequence[str], bridged: bool) -> list[str]:
    names = [n for n in builtin if n != QUERY_RESULT]
    names += [*BRIDGE_TOOLS] if bridged else []
    return [f"mcp__{face}__{n}" for n in (*names, QUERY_RESULT)]


def prepare_claude(settings: Mapping[str, Any], options: ClaudeOptions = ClaudeOptions()) -> Launch:
    """Write the turn's files and return the Claude Code launch (see the module's text)."""
    environ = dict(os.environ if options.environ is None else options.environ)
    face = face_name(settings)
    command = sidecar_command(options.sidecar)
    version = options.cli_version or claude_version(options.executable, environ)
    decision = decide(settings, options, environ, version)
    folder = private_folder("omb-claude-", options.temp_parent)
    try:
        return _write_launch(settings, options, environ, face, command, version, decision, folder)
    except BaseException:
        Launch([], {}, None, folder, folder).cleanup()
        raise


def _write_launch(settings: Mapping[str, Any], options: ClaudeOptions, environ: dict[str, str], face: str,
                  command: list[str], version: Version | None, decision: BridgeDecision, folder: Path) -> Launch:
    notes = [f"bridge: {'on' if decision.bridged else 'off'} ({decision.reason})"]
    builtin, complete = builtin_tool_names(settings, command, folder, environ, options.list_wait_seconds)
    if not complete and decision.bridged:
        decision = BridgeDecision(False, "the built-in catalog's tool names are not known")
        notes.append(f"bridge: off ({decision.reason})")
    bridged = decision.bridged
    face_keys = {"name": face, "layout": "bridged" if bridged else "full", "listWaitSeconds": options.list_wait_seconds}
    document = engine_document(settings, "claude", face_keys, {"agentsToolBridge": bridged})
    check_document(document)
    config = write_private_json(folder / "sidecar.json", document)
    server = {"type": "stdio", "command": command[0], "args": [*command[1:], "--config", str(config)],
              "env": {"OMB_AGENTS_TOOL_BRIDGE": "1" if bridged else "0"}}
    mcp_config = write_private_json(folder / "mcp.json", {"mcpServers": {face: server}})
    argv = [options.executable, "--mcp-config", str(mcp_config)]
    if not _inherits(options, environ):
        argv.append("--strict-mcp-config")
        if has_setting_sources(version):
            argv += ["--setting-sources", "project"]
    argv += ["--allowedTools", ",".join(_allowed(face, builtin, bridged))]
    argv += ["--tools", ",".join(options.tools)] if options.tools else []
    argv += ["--disallowedTools", ",".join(options.disallowed_tools)] if options.disallowed_tools else []
    argv += list(options.args)
    env = {**environ, "MCP_CONNECTION_NONBLOCKING": "0", "MCP_TIMEOUT": str(int((options.list_wait_seconds + 30) * 1000))}
    return Launch(argv, env, options.folder, folder, config, tuple(notes),
                  {"bridge": decision, "cli_version": version, "mcp_config": mcp_config})
