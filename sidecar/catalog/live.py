"""The face's current catalog and listing: one holder the hub writes and the gate reads.

Owns nothing but the pair. The hub swaps both at once on every rebuild; every reader
(the gate's resolve and local answers, the method handlers, traces) reads them through
this one object, so no copy can fall behind another.
"""

from __future__ import annotations

from sidecar.catalog.layouts import Listing, full_layout
from sidecar.catalog.merge import EMPTY_CATALOG, Catalog

__all__ = ["LiveCatalog", "ReadsLive"]


class LiveCatalog:
    """What the engine sees now: the merged catalog and its listing (empty until the first rebuild)."""

    __slots__ = ("catalog", "listing")

    def __init__(self) -> None:
        self.catalog: Catalog = EMPTY_CATALOG
        self.listing: Listing = full_layout(EMPTY_CATALOG)

    def swap(self, catalog: Catalog, listing: Listing) -> None:
        """Replace both together: no reader sees a catalog beside another catalog's listing."""
        self.catalog, self.listing = catalog, listing


class ReadsLive:
    """For a holder of `live`: its catalog and listing, read through the one holder (the
    hub and the gate's shared tables both read this way, so neither keeps a copy)."""

    __slots__ = ()
    live: LiveCatalog

    @property
    def catalog(self) -> Catalog:
        return self.live.catalog

    @property
    def listing(self) -> Listing:
        return self.live.listing
