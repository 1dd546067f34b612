"""The faces the layout tests, the golden files and the size table share.

A face here is a config (SPEC §8) plus the tools its upstreams list; `listing(face, label)`
runs the real path: `parse_config` -> `choose_layout` -> `build_catalog` -> `build_listing`.
Labels are the `face.layout` overrides (full, bridged, trio, cap) and `api`, the engine
row that combines all three (with the bridge switched on).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import msgspec
from fixture_platform import ALWAYS_LISTED, DIRECT_ONLY, platform_tools
from fixture_shop import shop_tools
from fixture_small import small_tools

from sidecar.catalog import (
    META_NAMES,
    Catalog,
    Listing,
    UpstreamListing,
    UpstreamTraits,
    build_catalog,
    build_listing,
    choose_layout,
    name_budget,
)
from sidecar.catalog.layouts import LayoutPlan
from sidecar.config import SidecarConfig, parse_config

RESERVED = META_NAMES | {"query_result"}
LABELS = ("full", "bridged", "trio", "cap", "api")
AGENTS = {"command": "omb-agents", "builtin": True, "alwaysListed": list(ALWAYS_LISTED), "directOnly": list(DIRECT_ONLY)}
SHOP = {"type": "http", "url": "https://mcp.shop.example/mcp"}
SMALL = {
    "notes": {"command": "notes-mcp"},
    "calendar": {"type": "http", "url": "https://calendar.example/mcp"},
    "tracker": {"type": "http", "url": "https://tracker.example/mcp"},
    "mail": {"command": "mail-mcp"},
    "drive": {"type": "sse", "url": "https://drive.example/sse"},
}


@dataclass(frozen=True)
class FaceSpec:
    name: str  # the face's registration name (engines prefix tools with mcp__<name>__)
    servers: tuple[str, ...]
    goldens: tuple[str, ...]  # the labels pinned in golden files


FACES = {
    "platform": FaceSpec("agents", ("agents",), ("full", "bridged", "cap")),
    "shop": FaceSpec("shop", ("shop",), ("full", "trio", "cap")),
    "team": FaceSpec("omb", ("agents", *SMALL), ("full", "bridged")),
    "mixed": FaceSpec("omb", ("agents", *SMALL, "shop"), ("trio", "cap", "api")),
}


def _tools_of(alias: str) -> list[dict[str, Any]]:
    if alias == "agents":
        return platform_tools()
    if alias == "shop":
        return shop_tools()
    return small_tools(alias)


def _entry(alias: str) -> dict[str, Any]:
    return AGENTS if alias == "agents" else SHOP if alias == "shop" else SMALL[alias]


def config(face: str, label: str) -> SidecarConfig:
    spec = FACES[face]
    document: dict[str, Any] = {
        "bot": {"id": "iris", "engine": "api" if label == "api" else "codex"},
        "features": {"agentsToolBridge": label == "api"},
        "face": {"name": spec.name, "layout": "auto" if label == "api" else label},
        "mcpServers": {alias: _entry(alias) for alias in spec.servers},
    }
    return parse_config(document, {})


def traits(config: SidecarConfig) -> list[UpstreamTraits]:
    return [UpstreamTraits(s.alias, s.type, s.builtin, tuple(s.always_listed), tuple(s.direct_only)) for s in config.servers]


@lru_cache(maxsize=None)
def catalog(face: str) -> Catalog:
    spec = FACES[face]
    listings = [UpstreamListing(alias, _tools_of(alias)) for alias in spec.servers]
    return build_catalog(listings, name_budget(spec.name), RESERVED, prefixed=len(spec.servers) > 1)


def plan(face: str, label: str) -> LayoutPlan:
    return choose_layout(config(face, label), {})


def listing(face: str, label: str) -> Listing:
    cfg = config(face, label)
    return build_listing(catalog(face), traits(cfg), choose_layout(cfg, {}))


def wire(listing: Listing) -> bytes:
    """The `tools/list` result bytes, as the face encodes one page holding every tool."""
    return msgspec.json.encode({"tools": list(listing.tools)})
