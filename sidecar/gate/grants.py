"""Grants: which tools a bot may use. Pure data in, a yes or no out.

A tool is known by its full name `alias__tool` (the upstream's own tool name, not the
engine-visible one, which may be shortened). The bot's selection comes first (servers,
then tools), then the allow-list, then the deny-list; deny wins. Patterns have one
special character, `*`, for any run of characters; nothing is ever compiled into an
expression from configuration text.
"""

from __future__ import annotations

from collections.abc import Sequence

from sidecar.config import Grants, Selection

__all__ = ["Grant", "glob_match", "full_name"]


def full_name(alias: str, tool: str) -> str:
    return f"{alias}__{tool}"


def glob_match(pattern: str, name: str) -> bool:
    """`*` matches any run of characters (none included); everything else is literal."""
    parts = pattern.split("*")
    if len(parts) == 1:
        return pattern == name
    head, *middle, tail = parts
    if not name.startswith(head) or not name.endswith(tail) or len(head) + len(tail) > len(name):
        return False
    position = len(head)
    end = len(name) - len(tail)
    for part in middle:
        found = name.find(part, position, end)
        if found < 0:
            return False
        position = found + len(part)
    return True


def _any(patterns: Sequence[str], name: str) -> bool:
    return any(glob_match(p, name) for p in patterns)


class Grant:
    """The bot's grant: selection, allow-list and deny-list, decided per full tool name."""

    def __init__(self, selection: Selection | None, grants: Grants) -> None:
        self.servers = frozenset(selection.servers) if selection and selection.servers is not None else None
        self.tools = tuple(selection.tools) if selection and selection.tools is not None else None
        self.allow = tuple(grants.allow) if grants.allow is not None else None
        self.deny = tuple(grants.deny)

    def allows(self, alias: str, tool: str) -> bool:
        if self.servers is not None and alias not in self.servers:
            return False
        name = full_name(alias, tool)
        if self.tools is not None and not _any(self.tools, name) and tool not in self.tools:
            return False
        if self.allow is not None and not _any(self.allow, name):
            return False
        return not _any(self.deny, name)

    @property
    def restricts(self) -> bool:
        return self.servers is not None or self.tools is not None or self.allow is not None or bool(self.deny)
