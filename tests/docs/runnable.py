"""The command blocks the docs mark as runnable, read out of the markdown.

A block is marked by an HTML comment on the line before its opening fence (blank lines may
sit between): `<!-- runnable -->`, optionally with `expect="TEXT"`, `needs="COMMAND"` and
`timeout="SECONDS"`. A marker inside another fenced block is an example, not a marker, so
the reader tracks fences (``` and ~~~, of any length) and looks for markers outside them only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^<!--\s*runnable\b(?P<attrs>.*?)-->\s*$")
ATTRIBUTE = re.compile(r'(\w+)="([^"]*)"')
FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
KNOWN = {"expect", "needs", "timeout"}


@dataclass(frozen=True)
class Block:
    """One marked block: where it is, what it runs, and what it must show."""

    path: Path
    line: int  # of the opening fence, 1-based
    code: str
    expect: str | None = None
    needs: str | None = None
    timeout: float = 60.0

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


def documents() -> list[Path]:
    """README.md and every page of docs/, the drafts of other branches left out."""
    pages = sorted(p for p in (REPO / "docs").rglob("*.md") if "drafts" not in p.relative_to(REPO / "docs").parts)
    return [REPO / "README.md", *pages]


def blocks_in(path: Path) -> list[Block]:
    lines = path.read_text().splitlines()
    found: list[Block] = []
    pending: dict[str, str] | None = None
    fence: str | None = None
    body: list[str] = []
    start = 0
    for number, line in enumerate(lines, 1):
        if fence is not None:
            if line.strip() == fence:
                if pending is not None:
                    found.append(_block(path, start, body, pending))
                fence, pending = None, None
            else:
                body.append(line)
            continue
        if (opening := FENCE.match(line.strip())) is not None:
            fence, body, start = opening["fence"], [], number
            continue
        if (marker := MARKER.match(line.strip())) is not None:
            pending = dict(ATTRIBUTE.findall(marker["attrs"]))
            unknown = set(pending) - KNOWN
            assert not unknown, f"{path}:{number}: unknown runnable attribute(s) {sorted(unknown)}"
        elif line.strip() and pending is not None:
            raise AssertionError(f"{path}:{number}: a runnable marker must come right before a fenced block")
    return found


def _block(path: Path, line: int, body: list[str], attrs: dict[str, str]) -> Block:
    return Block(path, line, "\n".join(body) + "\n", attrs.get("expect"), attrs.get("needs"),
                 float(attrs.get("timeout", 60)))


def all_blocks() -> list[Block]:
    return [block for path in documents() for block in blocks_in(path)]
