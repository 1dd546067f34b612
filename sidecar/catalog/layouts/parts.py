"""A `Part` is what one upstream (or the bridged built-ins) puts in a listing.

Layouts build parts; the builder orders them and, under a cap, decides which fit. A part
knows the tools it lists, the meta-tools among them, the `directOnly` tools it must keep
listed, and every catalog entry it covers (so the cap can move it behind the shared search
whole). No I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from sidecar.catalog.layouts.full import MetaTool
from sidecar.catalog.merge import CatalogEntry

__all__ = ["Part", "whole_part", "name_targets", "schema"]


class Part(msgspec.Struct, frozen=True):
    aliases: tuple[str, ...]
    tools: tuple[dict[str, Any], ...]  # what this part lists, in order
    entries: tuple[CatalogEntry, ...]  # every catalog entry it covers, listed or not
    meta: dict[str, MetaTool] = {}
    direct: tuple[CatalogEntry, ...] = ()  # directOnly entries: always listed, never run by a meta-tool
    builtin: bool = False
    notes: tuple[str, ...] = ()

    @property
    def size(self) -> int:
        return len(self.tools)


def whole_part(entries: Sequence[CatalogEntry], builtin: bool, direct: Iterable[CatalogEntry] = ()) -> Part:
    """One upstream listed as it is."""
    aliases = tuple(dict.fromkeys(e.alias for e in entries))
    return Part(aliases, tuple(e.spec for e in entries), tuple(entries), direct=tuple(direct), builtin=builtin)


def name_targets(entries: Iterable[CatalogEntry]) -> dict[str, str]:
    """The names that mean one of `entries`: their engine-visible names, and nothing else.

    An upstream's own tool name is never an alias: an upstream may call a tool
    `github__create_issue`, and a call meant for the real `github` server (still
    starting, behind another trio, or not granted) must never reach it.
    """
    return {e.exposed: e.exposed for e in entries}


def schema(properties: dict[str, Any], required: Sequence[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}
