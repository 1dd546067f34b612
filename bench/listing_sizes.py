"""Bytes of `tools/list` per layout for the pinned test catalogs, as a docs table.

Owns `docs/generated/listing-sizes.json` and `listing-sizes.md` (the table of
docs/layouts-and-search.md): it counts with `tests/catalog/layout_sizes.py` (the faces
of `tests/catalog/golden/`, so the figures are the golden files' own) and renders the
counts. The counts are bytes, not times: a run on any machine gives the same table.

    python -m bench.listing_sizes --docs DIR
"""

from __future__ import annotations

import sys
from typing import Any

from bench import doc_files

__all__ = ["measure", "render_docs"]

WRITER = "bench.listing_sizes"


def measure() -> dict[str, Any]:
    """Face -> its label -> layout -> [tools listed, bytes], as layout_sizes counts them."""
    import importlib

    sys.path.insert(0, str(doc_files.REPO / "tests" / "catalog"))  # a script beside its faces, not a package
    layout_sizes: Any = importlib.import_module("layout_sizes")
    sizes = layout_sizes.layout_sizes()
    return {"rows": {face: {"label": layout_sizes.ROWS[face], "layouts": {k: list(v) for k, v in row.items()}}
                     for face, row in sizes.items()}}


def _smaller(size: int, full: int) -> str:
    if size == full:
        return ""
    saved = 1 - size / full
    return f" ({saved:.1%} smaller)" if saved > 0.99 else f" ({saved:.0%} smaller)"


def render_docs(figures: dict[str, Any]) -> dict[str, str]:
    rows = figures["result"]["rows"]
    layouts = list(next(iter(rows.values()))["layouts"])
    lines = doc_files.table(["catalog", *layouts], [
        [row["label"], *(f"{b:,} B, {n} tools{_smaller(b, row['layouts']['full'][1])}" for n, b in row["layouts"].values())]
        for row in rows.values()])
    return {"listing-sizes.md": doc_files.page(WRITER, lines, figures["measured"])}


def main(argv: list[str]) -> int:
    result = measure()
    for path in doc_files.publish(WRITER, "listing-sizes", result, argv):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
