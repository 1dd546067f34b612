"""The full layout: every tool of the face, under its engine-visible name."""

from __future__ import annotations

from typing import Any

import msgspec

from sidecar.catalog.merge import Catalog

__all__ = ["Listing", "full_layout"]


class Listing(msgspec.Struct, frozen=True):
    """The tools the engine sees, in order, with each page pre-encoded on demand."""

    tools: tuple[dict[str, Any], ...]
    layout: str

    def page(self, offset: int, size: int) -> tuple[list[dict[str, Any]], int | None]:
        """Tools from `offset`, at most `size`, and the next offset (None at the end)."""
        end = offset + size
        following = end if end < len(self.tools) else None
        return list(self.tools[offset:end]), following


def full_layout(catalog: Catalog) -> Listing:
    return Listing(tuple(entry.spec for entry in catalog.tools), "full")
