"""Every figure table in the docs is a file a bench wrote, or is marked as no measurement.

A table of docs/*.md whose body holds a digit must either be an include of a file in
docs/generated/ (`--8<-- "generated/..."`, so it is no table in the page's source) or carry
`<!-- not a measurement -->` (or `<!-- not a measurement: why -->`) on a line of its own just
before it (a fixed fact: a default, a count of a fixture, what a named test asserts). Each generated markdown file is exactly the render of
its JSON (by the module the JSON names), ends with the line saying how and when it was
measured, and is included by some page.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # `bench` is a top-level package beside `sidecar`, not installed
    sys.path.insert(0, str(REPO))

from bench import doc_files  # noqa: E402

DOCS = REPO / "docs"
GENERATED = DOCS / "generated"
MARK = "<!-- not a measurement -->"
MARKED = re.compile(r"^<!-- not a measurement(: [^>]+)? -->$")
INCLUDE = re.compile(r'^--8<-- "generated/([^"]+)"\s*$')


def _tables(text: str) -> list[tuple[int, list[str]]]:
    """(first line number, the lines) of each markdown table outside fenced code."""
    found: list[tuple[int, list[str]]] = []
    fenced, start = False, 0
    current: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if not fenced and line.startswith("|"):
            start = start if current else number
            current.append(line)
            continue
        if current:
            found.append((start, current))
            current = []
    if current:
        found.append((start, current))
    return found


def _marked(lines: list[str], start: int) -> bool:
    before = [line for line in lines[: start - 1] if line.strip()]
    return bool(before) and bool(MARKED.match(before[-1].strip()))


def test_every_number_bearing_table_is_generated_or_marked_as_no_measurement() -> None:
    unmarked = []
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text()
        lines = text.splitlines()
        for start, table in _tables(text):
            if any(re.search(r"\d", row) for row in table[2:]) and not _marked(lines, start):
                unmarked.append(f"{page.name}:{start}: {table[0][:70]}")
    assert not unmarked, "hand-copied figure tables (include a generated file or mark them):\n" + "\n".join(unmarked)


def test_the_check_finds_a_copied_table_and_passes_a_marked_one() -> None:
    copied = "text\n\n| figure | ms |\n|---|---|\n| p50 | 0.29 |\n"
    marked = f"text\n\n{MARK}\n| key | default |\n|---|---|\n| `face.pageSize` | 1000 |\n"
    assert [start for start, _ in _tables(copied)] == [3] and not _marked(copied.splitlines(), 3)
    assert _marked(marked.splitlines(), 4)
    assert _marked(marked.replace(MARK, "<!-- not a measurement: what each test asserts -->").splitlines(), 4)


def test_each_generated_markdown_file_is_the_render_of_its_json() -> None:
    made: set[str] = set()
    for source in sorted(GENERATED.glob("*.json")):
        for name, text in doc_files.render_file(source).items():
            assert (GENERATED / name).read_text() == text, f"{name} differs from the render of {source.name}"
            made.add(name)
    assert {p.name for p in GENERATED.glob("*.md")} == made, "a generated file no JSON renders"


def test_each_generated_table_ends_with_how_and_when_it_was_measured() -> None:
    for path in sorted(GENERATED.glob("*.md")):
        last = path.read_text().rstrip("\n").splitlines()[-1]
        assert re.match(r"Measured with `.+` at commit `[0-9a-f]{7,}\+?` on \d{4}-\d\d-\d\d", last), (path.name, last)


def test_every_generated_table_is_included_by_a_page_and_every_include_exists() -> None:
    included = {m.group(1) for page in DOCS.glob("*.md") for line in page.read_text().splitlines()
                if (m := INCLUDE.match(line.strip()))}
    assert included <= {p.name for p in GENERATED.glob("*.md")}
    assert {p.name for p in GENERATED.glob("*.md")} <= included, "a generated table no page shows"
