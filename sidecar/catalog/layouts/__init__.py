"""Layouts: how a catalog is listed to the engine. One module per layout.

The seam with the rest of the sidecar:

- `choose_layout(config, environ)` gives the face's `LayoutPlan` (SPEC §4's table, the
  bridge switch, `face.layout`); `build_listing(catalog, traits, plan)` gives its `Listing`.
- `Listing` is what a layout produces: the tools the engine sees, in order, and for each
  listed meta-tool (`find_tool`, `use_tool`, a trio's search/describe/call) a `MetaTool`
  saying what it does and which catalog entries it covers.
- A compact listing (`compact`, on top of any plan) lists catalog tools by description and
  signature; `Listing.compact` names them, and the gate answers a direct call to one whose
  arguments do not fit with the real schema (`compact.misfit_answer`).
- Every search tool answers in one shape within a byte budget (`shown`).
- The gate resolves a meta call with the layout's own rules (a hidden tool named through
  `use_tool` or a trio's call tool runs down exactly the path of a direct call), and asks
  the layout to answer find/search/describe calls locally (`sidecar.catalog.answers`).
"""

from sidecar.catalog.layouts.build import META_NAMES, build_listing
from sidecar.catalog.layouts.choose import (
    LayoutPlan,
    bridge_switch,
    choose_layout,
    model_is_local,
)
from sidecar.catalog.layouts.full import Listing, MetaTool, UpstreamTraits, full_layout
from sidecar.catalog.layouts.trio import is_big

__all__ = [
    "META_NAMES",
    "LayoutPlan",
    "Listing",
    "MetaTool",
    "UpstreamTraits",
    "bridge_switch",
    "build_listing",
    "choose_layout",
    "full_layout",
    "is_big",
    "model_is_local",
]
