"""What the engine sees: merge upstream listings, name them, lay them out, search them. No I/O.

`SearchIndex` is re-exported lazily: the search package loads only when a layout hides
tools behind a search tool, or a query comes (start-up does not pay for it).
"""

from typing import TYPE_CHECKING, Any

from sidecar.catalog.answers import answer_meta, resolve_meta_call, unknown_tool_text
from sidecar.catalog.layouts import (
    META_NAMES,
    LayoutPlan,
    Listing,
    MetaTool,
    UpstreamTraits,
    build_listing,
    choose_layout,
    full_layout,
)
from sidecar.catalog.live import LiveCatalog
from sidecar.catalog.merge import (
    EMPTY_CATALOG,
    Catalog,
    CatalogEntry,
    UpstreamListing,
    UpstreamSize,
    build_catalog,
)
from sidecar.catalog.names import name_budget
from sidecar.catalog.sanitize import ToolCaps

if TYPE_CHECKING:
    from sidecar.catalog.search import SearchIndex

__all__ = [
    "EMPTY_CATALOG",
    "META_NAMES",
    "Catalog",
    "CatalogEntry",
    "LayoutPlan",
    "Listing",
    "LiveCatalog",
    "MetaTool",
    "SearchIndex",
    "ToolCaps",
    "UpstreamListing",
    "UpstreamSize",
    "UpstreamTraits",
    "answer_meta",
    "build_catalog",
    "build_listing",
    "choose_layout",
    "full_layout",
    "name_budget",
    "resolve_meta_call",
    "unknown_tool_text",
]


def __getattr__(name: str) -> Any:
    if name == "SearchIndex":
        from sidecar.catalog.search import SearchIndex

        return SearchIndex
    raise AttributeError(f"module 'sidecar.catalog' has no attribute {name!r}")
