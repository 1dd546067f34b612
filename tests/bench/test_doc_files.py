"""The one writer of the docs' figure files, and the benches that write through it.

Real runs where they are cheap: `bench.poison` and `bench.listing_sizes` measure for real
into a temporary folder; the writer's JSON renders back to exactly the markdown written.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import doc_files  # noqa: E402


def test_a_stamp_names_the_command_the_commit_the_date_and_the_load() -> None:
    said = doc_files.stamp("python -m bench.x --docs d")
    assert re.fullmatch(r"[0-9a-f]{7,}\+?", said["commit"]) and said["date"].endswith("UTC") and "load" in said
    line = doc_files.measured_line(said)
    assert line.startswith("Measured with `python -m bench.x --docs d` at commit `") and "load average" in line


def test_a_converted_stamp_keeps_the_original_run_and_says_so() -> None:
    said = doc_files.stamp("python -m bench.cloud", commit="184a4af", date="2026-12-01", note="Two runs.")
    assert "load" not in said
    assert doc_files.measured_line(said) == ("Measured with `python -m bench.cloud` at commit `184a4af` "
                                             "on 2026-12-01. Two runs.")


def test_write_puts_the_json_and_its_render_side_by_side(tmp_path: Path) -> None:
    figures: dict[str, Any] = {"measured": doc_files.stamp("x", commit="abcdef1", date="2026-12-01"),
                               "tables": {"t": {"header": ["a", "b"], "rows": [["1", "2"]],
                                                "measured": doc_files.stamp("y", commit="abcdef1", date="2026-12-01")}}}
    written = doc_files.write("recorded", "bench.recorded", figures, tmp_path)
    assert [p.name for p in written] == ["recorded.json", "recorded-t.md"]
    assert json.loads(written[0].read_text())["written_by"] == "bench.recorded"
    text = written[1].read_text()
    assert "| a | b |\n|---|---|\n| 1 | 2 |\n" in text and text.endswith("on 2026-12-01.\n")
    assert doc_files.render_file(written[0]) == {"recorded-t.md": text}


def test_the_poison_bench_writes_its_docs_table(tmp_path: Path) -> None:
    from bench import poison

    assert poison.main(["--docs", str(tmp_path)]) == 0
    figures = json.loads((tmp_path / "poison.json").read_text())
    assert figures["written_by"] == "bench.poison" and figures["result"]["poisoned"] > 0
    table = (tmp_path / "poison-corpus.md").read_text()
    assert f"{figures['result']['caught']}/{figures['result']['poisoned']} caught" in table
    assert doc_files.render_file(tmp_path / "poison.json") == {"poison-corpus.md": table}


def test_the_listing_sizes_are_the_golden_catalogs_counts(tmp_path: Path) -> None:
    from bench import listing_sizes

    assert listing_sizes.main(["--docs", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "listing-sizes.json").read_text())["result"]["rows"]
    committed = json.loads((doc_files.DOCS_GENERATED / "listing-sizes.json").read_text())["result"]["rows"]
    assert rows == committed, "the golden catalogs changed: run python -m bench.listing_sizes --docs docs/generated"


def test_the_console_pages_are_measured_on_a_real_sidecar(tmp_path: Path) -> None:
    from bench import console_pages

    assert console_pages.main(["--docs", str(tmp_path)]) == 0
    pages = json.loads((tmp_path / "console-pages.json").read_text())["result"]["pages"]
    assert set(pages) == {"/console/servers", "/console/calls", "/console/held", "/console/calls.json"}
    assert all(0 < row["median_ms"] <= row["p95_ms"] for row in pages.values())


def test_the_console_script_output_is_read_line_by_line() -> None:
    from bench.console_pages import parse

    said = parse("noise\n/console/held           median   0.40 ms  p95   3.00 ms  (41 servers, 200 calls in the ring, 200 GETs)\n")
    assert said == {"pages": {"/console/held": {"median_ms": 0.4, "p95_ms": 3.0}},
                    "setup": "41 servers, 200 calls in the ring, 200 GETs"}


def test_the_search_tables_of_bytes_are_the_catalogs_own(tmp_path: Path, monkeypatch: Any) -> None:
    """Answer and compact-listing bytes do not depend on the machine: a --docs run over the
    committed recall figures gives exactly the committed bytes (words only, a few seconds)."""
    import pytest

    from bench import search

    dev = Path(os.environ.get("OMB_RETRIEVAL_DEV") or Path(__file__).resolve().parents[3] / "shared" / "retrieval-dev")
    if not (dev / "queries.jsonl").exists():
        pytest.skip(f"no development set at {dev}")
    monkeypatch.setenv("OMB_RETRIEVAL_DEV", str(dev))
    committed = json.loads((doc_files.DOCS_GENERATED / "search.json").read_text())
    (tmp_path / "run.json").write_text(json.dumps(committed["run"]))
    assert search.main(["--docs", str(tmp_path / "out"), "--from-run", str(tmp_path / "run.json")]) == 0
    again = json.loads((tmp_path / "out" / "search.json").read_text())
    assert again["compact"] == committed["compact"] and again["answers"] == committed["answers"]


def test_the_snapshot_bench_times_a_real_build(tmp_path: Path) -> None:
    from bench import snapshot

    result = snapshot.measure(servers=5, builds=3)
    assert result["servers"] == 5 and 0 < result["fastest_ms"] <= result["median_ms"]
    assert snapshot.main(["--docs", str(tmp_path)]) == 0
    assert "| 50 servers, each with an env secret (50 builds) |" in (tmp_path / "snapshot.md").read_text()
