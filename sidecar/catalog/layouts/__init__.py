"""Layouts: how a catalog is listed to the engine. One module per layout."""

from sidecar.catalog.layouts.full import Listing, full_layout

__all__ = ["Listing", "full_layout"]
