"""The bridge decision for Claude Code (SPEC §6): bridged only where nothing decides by a
tool's own name.

A call made through `use_tool` reaches Claude Code's permission rules and hooks under the
name `use_tool`, so a rule written about a tool by name would miss it. `claude_bridge` is
the one function that decides; its answer is "not bridged" unless every rule below has
passed, and a failure while deciding is "not bridged" too, with one log line naming only
the kind of error. The rules, in the order they are asked:

1. the switch is on (`OMB_AGENTS_TOOL_BRIDGE` exactly 1/0 wins; else the saved setting or a
   model served from this machine or its network);
2. the bot has no tool selection;
3. the bot does not inherit the machine's own Claude Code setup;
4. the CLI's version is known and at least 1.0.122 (the first with `--setting-sources`);
5. no `tools`/`disallowedTools` entry names the bridged server or has a wildcard in a
   tool's name;
6. every settings file the CLI reads for the turn can be read as settings, does not name
   the server (raw text, or any key or string it parses to), sets no `PreToolUse` or
   `PermissionRequest` hook, and holds no deny/ask rule with a wildcard in a tool's name;
   the managed ones do not set `allowManagedPermissionRulesOnly` to anything but
   false/null.

"Names the server": case-insensitively contains `mcp__<server>`, or `mcp__` directly
followed by `*` or `?`. "A wildcard in a tool's name": a `*` or `?` outside parentheses,
where one flag is set at `(` and cleared at `)`. No pattern is built from configuration.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shims.claude.settings import (
    JsonObject,
    Settings,
    Unreadable,
    managed_settings,
    project_settings,
    read_settings,
)
from shims.claude.version import SETTING_SOURCES_SINCE, Version

__all__ = [
    "BridgeTurn",
    "BridgeDecision",
    "claude_bridge",
    "bridge_switch",
    "model_is_local",
    "names_server",
    "has_tool_wildcard",
]

log = logging.getLogger(__name__)

INHERIT_VARIABLE = "OMB_CLAUDE_INHERIT_USER_CONFIG"
SWITCH_VARIABLE = "OMB_AGENTS_TOOL_BRIDGE"
_HOOK_KEYS = frozenset({"pretooluse", "permissionrequest"})
_RULE_LISTS = frozenset({"deny", "ask"})
_MANAGED_ONLY = "allowmanagedpermissionrulesonly"


@dataclass(frozen=True)
class BridgeTurn:
    """What the decision looks at for one turn."""

    switch_on: bool
    server: str  # the name the sidecar is registered under (`mcp__<server>__...`)
    folder: Path  # the turn's folder (the home folder when the turn has none)
    cli_version: Version | None
    has_selection: bool = False
    inherits_user_config: bool = False
    tools: tuple[str, ...] = ()
    disallowed_tools: tuple[str, ...] = ()
    platform: str = field(default_factory=lambda: sys.platform)
    managed_root: Path | None = None  # the machine's folders under another folder (tests)


@dataclass(frozen=True)
class BridgeDecision:
    bridged: bool
    reason: str


# -- the tests on text -------------------------------------------------------------------


def names_server(text: str, server: str) -> bool:
    lowered = text.lower()
    if f"mcp__{server.lower()}" in lowered:
        return True
    return "mcp__*" in lowered or "mcp__?" in lowered


def has_tool_wildcard(rule: str) -> bool:
    inside = False
    for char in rule:
        if char == "(":
            inside = True
        elif char == ")":
            inside = False
        elif char in "*?" and not inside:
            return True
    return False


# -- the switch ----------------------------------------------------------------------------


def model_is_local(url: str | None) -> bool:
    """A model URL on this machine or its network: the sidecar's own rule, asked of its config."""
    from sidecar.config import model_is_local as sidecar_rule

    return sidecar_rule(url)


def bridge_switch(settings: Mapping[str, Any], environ: Mapping[str, str]) -> bool:
    forced = environ.get(SWITCH_VARIABLE)
    if forced in ("0", "1"):
        return forced == "1"
    features = settings.get("features")
    saved = isinstance(features, Mapping) and features.get("agentsToolBridge") is True
    bot = settings.get("bot")
    url = bot.get("modelUrl") if isinstance(bot, Mapping) else None
    return saved or model_is_local(url if isinstance(url, str) else None)


# -- the rules -------------------------------------------------------------------------------


def _switch_off(turn: BridgeTurn) -> str | None:
    return None if turn.switch_on else "the bridge switch is off"


def _selection(turn: BridgeTurn) -> str | None:
    return "the bot has a tool selection" if turn.has_selection else None


def _inherits(turn: BridgeTurn) -> str | None:
    return "the bot inherits this machine's Claude Code setup" if turn.inherits_user_config else None


def _old_cli(turn: BridgeTurn) -> str | None:
    if turn.cli_version is None:
        return "the Claude CLI's version is not known"
    if turn.cli_version < SETTING_SOURCES_SINCE:
        return f"the Claude CLI is older than {'.'.join(map(str, SETTING_SOURCES_SINCE))}"
    return None


def _tool_lists(turn: BridgeTurn) -> str | None:
    for flag, entries in (("tools", turn.tools), ("disallowedTools", turn.disallowed_tools)):
        for entry in entries:
            if names_server(entry, turn.server):
                return f"a {flag} entry names the {turn.server} server"
            if has_tool_wildcard(entry):
                return f"a {flag} entry has a wildcard in a tool's name"
    return None


def _settings_files(turn: BridgeTurn) -> str | None:
    for path in project_settings(turn.folder):
        reason = _file_refusal(path, False, turn.server)
        if reason:
            return reason
    for path in managed_settings(turn.platform, turn.managed_root):
        reason = _file_refusal(path, True, turn.server)
        if reason:
            return reason
    return None


_RULES: tuple[Callable[[BridgeTurn], str | None], ...] = (
    _switch_off, _selection, _inherits, _old_cli, _tool_lists, _settings_files,
)


def claude_bridge(turn: BridgeTurn) -> BridgeDecision:
    """Bridged only when every rule passes; any failure while deciding means unbridged."""
    try:
        for rule in _RULES:
            reason = rule(turn)
            if reason is not None:
                return BridgeDecision(False, reason)
    except Unreadable as exc:
        return BridgeDecision(False, f"a settings file cannot be read as settings: {exc}")
    except Exception as exc:  # the decision itself failed: say only what kind of error
        log.warning("the bridge decision failed (%s): the turn runs unbridged", type(exc).__name__)
        return BridgeDecision(False, f"the decision failed ({type(exc).__name__})")
    return BridgeDecision(True, "every rule passed")


# -- one settings file ------------------------------------------------------------------------


def _file_refusal(path: Path, managed: bool, server: str) -> str | None:
    settings = read_settings(path, managed)
    if settings is None:
        return None
    tree = settings.tree
    if not isinstance(tree, JsonObject):
        raise Unreadable(f"{path}'s top level is not an object")
    for check in _FILE_CHECKS:
        reason = check(settings, server)
        if reason:
            return f"{path} {reason}"
    return None


def _names_server_in_file(settings: Settings, server: str) -> str | None:
    if names_server(settings.text, server) or any(names_server(s, server) for s in _strings(settings.tree, keys=True)):
        return f"names the {server} server"
    return None


def _hooks(settings: Settings, _server: str) -> str | None:
    for key, value in _pairs(settings.tree, "hooks"):
        if not isinstance(value, JsonObject):
            raise Unreadable(f"{settings.path}'s {key} is not an object")
        for event, handlers in value:
            if event.lower() in _HOOK_KEYS and handlers is not None:
                return f"sets a {event} hook"
    return None


def _wildcard_rules(settings: Settings, _server: str) -> str | None:
    for _, permissions in _pairs(settings.tree, "permissions"):
        for key, rules in _pairs(permissions, *_RULE_LISTS):
            if any(has_tool_wildcard(rule) for rule in _strings(rules, keys=False)):
                return f"holds a permissions.{key} rule with a wildcard in a tool's name"
    return None


def _managed_rules_only(settings: Settings, _server: str) -> str | None:
    if not settings.managed:
        return None
    for key, value in _all_pairs(settings.tree):
        if key.lower() == _MANAGED_ONLY and value is not None and value is not False:
            return f"sets {key}"
    return None


_FILE_CHECKS: tuple[Callable[[Settings, str], str | None], ...] = (
    _names_server_in_file, _hooks, _wildcard_rules, _managed_rules_only,
)


def _pairs(tree: Any, *wanted: str) -> Iterator[tuple[str, Any]]:
    """The pairs of an object whose keys match `wanted` without regard to case."""
    if isinstance(tree, JsonObject):
        yield from ((k, v) for k, v in tree if k.lower() in wanted)


def _all_pairs(tree: Any) -> Iterator[tuple[str, Any]]:
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, JsonObject):
            for key, value in node:
                yield key, value
                stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)


def _strings(tree: Any, keys: bool) -> Iterable[str]:
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            yield node
        elif isinstance(node, JsonObject):
            for key, value in node:
                if keys:
                    yield key
                stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
