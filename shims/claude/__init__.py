"""Claude Code's shim: the sidecar as its one MCP server, and the bridge decision (SPEC §6).

    python -m shims.claude --settings BOT.json [--folder DIR] [--tools T] [--disallowed-tools T]
                           [--inherit-user-config] [--claude PATH] [--dry-run] -- CLAUDE ARGS...
"""

from shims.claude.launch import ClaudeOptions, builtin_tool_names, prepare_claude
from shims.claude.refusal import (
    BridgeDecision,
    BridgeTurn,
    bridge_switch,
    claude_bridge,
    has_tool_wildcard,
    names_server,
)
from shims.claude.version import claude_version, parse_version

__all__ = [
    "BridgeDecision",
    "BridgeTurn",
    "ClaudeOptions",
    "bridge_switch",
    "builtin_tool_names",
    "claude_bridge",
    "claude_version",
    "has_tool_wildcard",
    "names_server",
    "parse_version",
    "prepare_claude",
]
