"""Every layout's `tools/list` bytes for the test catalogs, pinned in tests/catalog/golden/.

After a deliberate change, regenerate with `OMB_REGENERATE_GOLDEN=1 .venv/bin/pytest
tests/catalog/test_golden.py` and review the diff (`python -m json.tool` makes a file
readable). `summary.json` beside them holds each layout's tool count, size and notes.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import faces
import pytest
from layout_sizes import layout_sizes, markdown

GOLDEN = Path(__file__).resolve().parent / "golden"
REGENERATE = os.environ.get("OMB_REGENERATE_GOLDEN") == "1"
PINNED = [(face, label) for face, spec in faces.FACES.items() for label in spec.goldens]


def golden_path(face: str, label: str) -> Path:
    return GOLDEN / f"{face}.{label}.json"


def summary() -> bytes:
    rows = {}
    for face, label in PINNED:
        listing = faces.listing(face, label)
        rows[f"{face}.{label}"] = {"layout": listing.layout, "tools": len(listing.tools),
                                   "bytes": len(faces.wire(listing)), "notes": list(listing.notes)}
    return (json.dumps(rows, indent=2, ensure_ascii=False) + "\n").encode()


def check(path: Path, produced: bytes) -> None:
    if REGENERATE:
        GOLDEN.mkdir(exist_ok=True)
        if not path.exists() or path.read_bytes() != produced:
            path.write_bytes(produced)
        return
    assert path.exists(), f"{path.name} is missing: run with OMB_REGENERATE_GOLDEN=1"
    assert path.read_bytes() == produced, f"{path.name} changed: review, then regenerate with OMB_REGENERATE_GOLDEN=1"


@pytest.mark.parametrize(("face", "label"), PINNED, ids=[f"{f}.{l}" for f, l in PINNED])
def test_tools_list_bytes_are_pinned(face: str, label: str) -> None:
    check(golden_path(face, label), faces.wire(faces.listing(face, label)))


def test_the_summary_is_pinned() -> None:
    check(GOLDEN / "summary.json", summary())


def test_no_stray_golden_files() -> None:
    expected = {golden_path(f, l).name for f, l in PINNED} | {"summary.json"}
    assert {p.name for p in GOLDEN.iterdir()} == expected


def test_another_process_with_other_hash_seeds_builds_the_same_bytes() -> None:
    """Regenerating changes nothing: no set or dict order leaks into a listing."""
    code = (
        "import hashlib, sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]; import faces\n"
        "h = hashlib.sha256()\n"
        "for face, spec in faces.FACES.items():\n"
        "    for label in spec.goldens: h.update(faces.wire(faces.listing(face, label)))\n"
        "print(h.hexdigest())"
    )
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for face, label in PINNED:
        digest.update(golden_path(face, label).read_bytes())
    for seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", code, str(here), str(here.parents[1])], env=env,
                             capture_output=True, text=True, check=True, timeout=60).stdout.strip()
        assert out == digest.hexdigest()


def test_the_size_table_runs() -> None:
    table = markdown(layout_sizes())
    assert table.count("\n") == 5 and "425-tool API" in table
