"""Engine-visible names: `<alias>__<tool>`, fitted to provider rules, reversible.

Providers accept `^[a-zA-Z0-9_-]{1,64}$`, and engines add their own `mcp__<face>__`
prefix, so a name gets `64 - len("mcp__<face>__")` characters. A name that does not fit,
or that collides with one already given or reserved, is cut and given an 8-hex digest of
its full origin; the same inputs always give the same names.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence

__all__ = ["PROVIDER_NAME", "name_budget", "assign_names", "clean_name"]

PROVIDER_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_NOT_ALLOWED = re.compile(r"[^a-zA-Z0-9_-]")
_SEPARATOR = "__"
_MIN_BUDGET = 16


def name_budget(face_name: str) -> int:
    """How many characters a tool name may have once the engine prefixes it."""
    return max(_MIN_BUDGET, 64 - len(f"mcp__{face_name}__"))


def clean_name(name: str) -> str:
    return _NOT_ALLOWED.sub("_", name) or "_"


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8", "replace")).hexdigest()[:8]


def assign_names(
    origins: Sequence[tuple[str, str]],
    budget: int,
    reserved: Iterable[str] = (),
    prefixed: bool = True,
) -> list[str]:
    """Give each (alias, tool) an engine-visible name, in order, all distinct."""
    taken = set(reserved)
    names: list[str] = []
    for alias, tool in origins:
        wanted = clean_name(f"{alias}{_SEPARATOR}{tool}" if prefixed else tool)
        name = wanted
        if len(name) > budget or name in taken:
            name = f"{wanted[: budget - 9]}_{_digest(alias, tool)}"
        serial = 1
        while name in taken:
            serial += 1
            name = f"{wanted[: budget - 12]}_{_digest(alias, tool, str(serial))[:5]}_{serial % 100:02d}"
        taken.add(name)
        names.append(name)
    return names
