"""What the engine sees: merge upstream listings, name them, lay them out. No I/O."""

from sidecar.catalog.layouts import Listing, full_layout
from sidecar.catalog.merge import (
    EMPTY_CATALOG,
    Catalog,
    CatalogEntry,
    UpstreamListing,
    UpstreamSize,
    build_catalog,
)
from sidecar.catalog.names import name_budget

__all__ = [
    "EMPTY_CATALOG",
    "Catalog",
    "CatalogEntry",
    "Listing",
    "UpstreamListing",
    "UpstreamSize",
    "build_catalog",
    "full_layout",
    "name_budget",
]
