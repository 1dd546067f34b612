"""Layouts: how a catalog is listed to the engine. One module per layout.

The seam with the rest of the sidecar:

- `Listing` is what a layout produces: the tools the engine sees, in order, and for each
  listed meta-tool (`find_tool`, `use_tool`, a trio's search/describe/call) a `MetaTool`
  saying what it does and which catalog entries it covers.
- The gate resolves a meta call with the layout's own rules (a hidden tool named through
  `use_tool` or a trio's call tool runs down exactly the path of a direct call), and asks
  the layout to answer find/search/describe calls locally.
"""

from sidecar.catalog.layouts.full import Listing, MetaTool, UpstreamTraits, full_layout

__all__ = ["Listing", "MetaTool", "UpstreamTraits", "full_layout"]
