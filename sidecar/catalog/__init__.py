"""What the engine sees: merge upstream listings, name them, lay them out, search them. No I/O.

Every name is re-exported lazily (PEP 562): importing one module of the package (the trust
scan's `sanitize`, say, before the early `initialize` answer) does not load the merge, the
layouts and the answers with it, and the search package loads only when a layout hides
tools behind a search tool, or a query comes (start-up does not pay for it).
"""

from typing import TYPE_CHECKING

from sidecar import names_on_first_use

if TYPE_CHECKING:
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
        ToolsEncoding,
        UpstreamListing,
        UpstreamSize,
        build_catalog,
    )
    from sidecar.catalog.names import name_budget
    from sidecar.catalog.sanitize import ToolCaps
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
    "ToolsEncoding",
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


# name -> the module that defines it, imported on first use
_HOMES = {
    **dict.fromkeys(("answer_meta", "resolve_meta_call", "unknown_tool_text"), "answers"),
    **dict.fromkeys(("META_NAMES", "LayoutPlan", "Listing", "MetaTool", "UpstreamTraits", "build_listing",
                     "choose_layout", "full_layout"), "layouts"),
    "LiveCatalog": "live",
    **dict.fromkeys(("EMPTY_CATALOG", "Catalog", "CatalogEntry", "ToolsEncoding", "UpstreamListing", "UpstreamSize",
                     "build_catalog"), "merge"),
    "name_budget": "names",
    "ToolCaps": "sanitize",
    "SearchIndex": "search",
}


__getattr__ = names_on_first_use(__name__, _HOMES)
