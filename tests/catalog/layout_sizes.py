"""Bytes of `tools/list` per layout for the test catalogs: the table in the README.

Run it from anywhere: `python tests/catalog/layout_sizes.py` (add `--markdown` for the
README's table). The test suite runs `layout_sizes()` as a smoke test.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import faces  # noqa: E402

ROWS = {
    "platform": "platform catalog (39 tools, 1 server)",
    "shop": "425-tool API (1 server)",
    "team": "platform + 5 small servers (86 tools)",
    "mixed": "platform + 5 small + 425-tool API (511 tools)",
}


def layout_sizes() -> dict[str, dict[str, tuple[int, int]]]:
    """face -> label -> (tools listed, bytes of the tools/list result)."""
    return {face: {label: _measure(face, label) for label in faces.LABELS} for face in ROWS}


def _measure(face: str, label: str) -> tuple[int, int]:
    listing = faces.listing(face, label)
    return len(listing.tools), len(faces.wire(listing))


def markdown(sizes: dict[str, dict[str, tuple[int, int]]]) -> str:
    header = "| catalog | " + " | ".join(faces.LABELS) + " |"
    lines = [header, "|" + "---|" * (len(faces.LABELS) + 1)]
    for face, row in sizes.items():
        full = row["full"][1]
        cells = [f"{b:,} B, {n} tools{_smaller(b, full)}" for n, b in row.values()]
        lines.append(f"| {ROWS[face]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _smaller(size: int, full: int) -> str:
    if size == full:
        return ""
    saved = 1 - size / full
    return f" ({saved:.1%} smaller)" if saved > 0.99 else f" ({saved:.0%} smaller)"


def plain(sizes: dict[str, dict[str, tuple[int, int]]]) -> str:
    width = max(map(len, ROWS.values()))
    lines = [f"{'catalog':<{width}}  " + "  ".join(f"{label:>16}" for label in faces.LABELS)]
    for face, row in sizes.items():
        cells = "  ".join(f"{f'{b:,} B/{n}':>16}" for n, b in row.values())
        lines.append(f"{ROWS[face]:<{width}}  {cells}")
    return "\n".join(lines)


if __name__ == "__main__":
    table = layout_sizes()
    print(markdown(table) if "--markdown" in sys.argv else plain(table))
