"""Layout build: the sidecar's catalog code timed on in-memory catalogs, no processes.

Owns the one benchmark that imports the sidecar: it builds upstream listings
from `bench.catalogs`, then times `sidecar.catalog.build_catalog` (the merge)
and `build_listing` under each layout plan (full, bridged, trio, cap), and
encodes each listing as a `tools/list` result to count its bytes. The face is
the platform's own catalog (built-in, bridged when the plan says so), the
425-tool server and twelve servers of 100; the merge of three 425-tool servers
is timed on its own (the issue's 1,275-tool target), and the platform catalog
alone is listed full and bridged (the seed's 65-74% smaller target).

Refuses to fail the run: if the sidecar's catalog API is missing or has
changed, the result is `{"error": ...}` and the report says so.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import msgspec

from bench.catalogs import (
    GITHUB,
    PLATFORM,
    CatalogSpec,
    build_catalog,
    github_set,
    server_set,
)

__all__ = ["time_layout_build"]

_ALWAYS_LISTED = ("list_bots", "post_to_room", "send_voice_note")
_DIRECT_ONLY = ("post_to_room", "send_voice_note")


def _median_ms(work: Callable[[], object], repeats: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3, result


def _listings(face: list[tuple[str, CatalogSpec]]) -> list[Any]:
    from sidecar.catalog import ToolsEncoding, UpstreamListing

    listings = []
    for alias, spec in face:
        tools = build_catalog(spec)
        listings.append(UpstreamListing(alias, tools, encoding=ToolsEncoding.of(msgspec.json.encode(tools))))
    return listings


def _plans() -> dict[str, Any]:
    from sidecar.catalog import LayoutPlan

    return {
        "full": LayoutPlan(),
        "bridged": LayoutPlan(bridged=True),
        "trio": LayoutPlan(trio=frozenset({"stdio", "http", "sse"})),
        "cap": LayoutPlan(trio=frozenset({"stdio", "http", "sse"}), cap=128),
    }


def _measure(repeats: int) -> dict[str, float]:
    from sidecar.catalog import META_NAMES, UpstreamTraits, build_listing
    from sidecar.catalog import build_catalog as merge

    encode = msgspec.json.Encoder().encode
    face = [("agents", PLATFORM), ("gh", GITHUB)] + [(f"s{i + 1:02d}", s) for i, s in enumerate(server_set())]
    listings = _listings(face)
    traits = [UpstreamTraits("agents", builtin=True, always_listed=_ALWAYS_LISTED,
                             direct_only=_DIRECT_ONLY)] + [UpstreamTraits(a) for a, _ in face[1:]]
    figures: dict[str, float] = {"face_tools": float(sum(spec.tools for _, spec in face))}
    three = _listings([(f"gh{i + 1}", spec) for i, spec in enumerate(github_set(3))])
    merge_ms, merged = _median_ms(lambda: merge(three, 64, META_NAMES), repeats)
    full = _plans()["full"]
    list_ms, _ = _median_ms(lambda: encode({"tools": build_listing(merged, [], full).tools}), repeats)
    figures |= {"merge_3x425_ms": merge_ms, "list_3x425_ms": list_ms, "merged_3x425_tools": float(len(merged.tools))}
    platform = merge(listings[:1], 64, META_NAMES)
    for name in ("full", "bridged"):
        listed = build_listing(platform, traits[:1], _plans()[name]).tools
        figures[f"platform_{name}_bytes"] = float(len(encode({"tools": listed})))
        figures[f"platform_{name}_tools"] = float(len(listed))
    face_ms, catalog = _median_ms(lambda: merge(listings, 64, META_NAMES), repeats)
    figures["merge_face_ms"] = face_ms
    for name, plan in _plans().items():
        build_ms, built = _median_ms(partial(build_listing, catalog, traits, plan), repeats)
        encode_ms, body = _median_ms(partial(encode, {"tools": built.tools}), repeats)
        figures |= {f"layout_{name}_ms": build_ms, f"layout_{name}_encode_ms": encode_ms,
                    f"layout_{name}_bytes": float(len(body)), f"layout_{name}_tools": float(len(built.tools))}
    return figures


def time_layout_build(repeats: int = 5) -> dict[str, Any]:
    """Figures of the in-memory merge and of each layout, or {"error": why}."""
    try:
        return _measure(repeats)
    except Exception as exc:  # noqa: BLE001 (the sidecar's API moving must not end the run)
        return {"error": f"{type(exc).__name__}: {exc}"}
    finally:
        from sidecar.catalog.search.semantic import wait_idle

        # the layouts' search indexes are filled by the model's thread after they are built:
        # the next in-memory figures (the gate's calls) must not share the CPU with it
        wait_idle(300.0)
