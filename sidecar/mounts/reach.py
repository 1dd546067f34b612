"""Which configured servers a bot can reach at all: the ones a face starts.

A server is reached when `bot.selection.servers` (if given) names it, when
`bot.selection.tools` and `grants.allow` (if given) each hold a pattern that could name
one of its tools, and when no `grants.deny` pattern takes every tool it has. A server
the bot cannot reach is never started, so none of its surfaces (tools, prompts,
resources, resource templates, completions, subscriptions) is listed or readable.
Tool by tool, the gate's grant still decides; this is only the server-level cut, and
it errs towards starting a server when a pattern leaves the answer open (a bare tool
name, such as `read_file`, may be any server's).

Patterns are the grant's: `*` is any run of characters and nothing else is special.
"""

from __future__ import annotations

import logging
from sidecar.config import ServerConfig, SidecarConfig

__all__ = ["reachable", "reaches"]

log = logging.getLogger(__name__)

SEPARATOR = "__"


def _could_name(pattern: str, alias: str) -> bool:
    """Could `pattern` match `alias__<some tool>`? A bare name (no `__`, no `*`) is a tool
    name of any server, as the grant reads it."""
    prefix = alias + SEPARATOR
    if "*" not in pattern:
        return SEPARATOR not in pattern or (pattern.startswith(prefix) and len(pattern) > len(prefix))
    head = pattern.split("*", 1)[0]
    return head.startswith(prefix) or prefix.startswith(head)


def _takes_all(pattern: str, alias: str) -> bool:
    """Does `pattern` match every tool of `alias` (one trailing `*` over a prefix of it)?"""
    head, star, rest = pattern.partition("*")
    return bool(star) and not rest and (alias + SEPARATOR).startswith(head)


def reaches(config: SidecarConfig, alias: str) -> bool:
    selection = config.bot.selection
    if selection is not None and selection.servers is not None and alias not in selection.servers:
        return False
    for patterns in (selection.tools if selection else None, config.grants.allow):
        if patterns is not None and not any(_could_name(p, alias) for p in patterns):
            return False
    return not any(_takes_all(p, alias) for p in config.grants.deny)


def reachable(config: SidecarConfig) -> list[ServerConfig]:
    """The servers of `config` the bot can reach, in order; the rest said once (INFO)."""
    kept: list[ServerConfig] = []
    for server in config.servers:
        if reaches(config, server.alias):
            kept.append(server)
        else:
            log.info("upstream '%s' is not started: the bot's selection and grants leave nothing of it", server.alias)
    return kept
