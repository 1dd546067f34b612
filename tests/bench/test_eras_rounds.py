"""bench.eras_rounds: a real (small) run of tests/eras/measure_rounds.py through the bench,
and the reading of the script's lines."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # `bench` is a top-level package beside `sidecar`, not installed
    sys.path.insert(0, str(REPO))

from bench import doc_files, eras_rounds  # noqa: E402

pytestmark = pytest.mark.timeout(300)

OUTPUT = """call that asks nothing (1 round): median 1.6 ms over 40 calls
call that asks once (2 rounds): median 2.2 ms over 40 calls
60 questions held at once: sidecar RSS 54292 -> 54912 KiB (10.3 KiB each)
"""


def test_the_scripts_lines_are_read_into_figures() -> None:
    assert eras_rounds.parse("noise\n" + OUTPUT) == {
        "calls": {"nothing": {"rounds": 1, "median_ms": 1.6, "calls": 40},
                  "once": {"rounds": 2, "median_ms": 2.2, "calls": 40}},
        "memory": {"held": 60, "before_kib": 54292, "after_kib": 54912}}


def test_output_missing_a_figure_is_an_error_not_a_table() -> None:
    with pytest.raises(RuntimeError, match="did not print every figure"):
        eras_rounds.parse(OUTPUT.splitlines()[0])


def test_a_small_real_run_writes_the_table_its_json_renders(tmp_path: Path) -> None:
    assert eras_rounds.main(["--calls", "3", "--held", "3", "--docs", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "eras-rounds.json").read_text())["result"]
    assert result["calls"]["nothing"]["rounds"] == 1 and result["calls"]["once"]["rounds"] == 2
    assert all(row["median_ms"] > 0 for row in result["calls"].values())
    assert result["memory"]["held"] == 3 and result["memory"]["after_kib"] > 0
    table = (tmp_path / "eras-rounds.md").read_text()
    assert "| the sidecar's RSS with 3 questions held at once |" in table
    assert doc_files.render_file(tmp_path / "eras-rounds.json") == {"eras-rounds.md": table}
