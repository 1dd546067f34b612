"""The benchmark tables the docs include are the bench's own output, never hand-edited.

`docs/generated/bench-table.md` must be exactly what `bench/doc_table.py` renders from
`docs/generated/bench-figures.json`; and the figures a full run picks (after
`report.derive`) render into the same tables, so a run of `python -m bench` can replace them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # `bench` is a top-level package beside `sidecar`, not installed
    sys.path.insert(0, str(REPO))

from bench import doc_table  # noqa: E402
from bench.report import derive  # noqa: E402

GENERATED = REPO / "docs" / "generated"


def test_the_committed_table_is_rendered_from_the_committed_figures() -> None:
    figures = json.loads((GENERATED / doc_table.FIGURES_FILE).read_text())
    assert (GENERATED / doc_table.TABLE_FILE).read_text() == doc_table.render_markdown(figures)


def test_the_benchmarks_page_includes_the_table_and_copies_no_figure() -> None:
    page = (REPO / "docs" / "benchmarks.md").read_text()
    assert '--8<-- "generated/bench-table.md"' in page
    assert "| start -> initialize (ms) |" not in page


def _run_in_runner_shape() -> dict[str, object]:
    """A run as `bench.runner.run` returns it, for two candidates, before `derive`."""
    def entry(p50: float, rss_kb: float) -> dict[str, object]:
        return {"median": {"init_ms": 100.0, "list_ms": 150.0, "call_p50_us": p50, "call_p90_us": p50 + 5,
                           "call_p99_us": p50 + 9, "calls_per_s_64": 1e6 / p50, "vmrss_idle_kb": rss_kb}}
    return {
        "machine": {"cpu": "test cpu", "cores": 2, "python": "3.11", "implementation": "CPython", "kernel": "6",
                    "loadavg": [1.0], "loadavg_end": [2.0]},
        "duration_s": 10.0, "candidates": ["direct", "relay", "sidecar"],
        "cases": {"session": {"results": {"direct": entry(30.0, 20480), "relay": entry(50.0, 10240),
                                          "sidecar": entry(130.0, 40960)}},
                  "many": {"results": {}}, "three": {"results": {}}},
        "layout_build": {"error": "not in this run"}, "gate": {"error": "not in this run"},
    }


def test_a_full_run_writes_figures_and_tables_that_agree(tmp_path: Path) -> None:
    results = derive(_run_in_runner_shape())
    table = doc_table.write(results, "python -m bench", tmp_path)
    figures = json.loads((tmp_path / doc_table.FIGURES_FILE).read_text())
    assert table.read_text() == doc_table.render_markdown(figures)
    said = table.read_text()
    assert "| added p50 vs direct (us) | 0 | 20 | 100 |" in said
    assert "| RSS idle (MB) | 20 | 10 | 40 |" in said
    assert "In memory: not measured in this run." in said


def test_the_bench_command_writes_the_docs_tables_where_told(tmp_path: Path) -> None:
    """A real (smoke-sized) run of `python -m bench` with `--docs DIR`; a --quick run without
    it leaves docs/generated/ alone (checked by the committed-table test above)."""
    from bench.__main__ import main as bench_main

    docs = tmp_path / "generated"
    argv = ["--quick", "--only", "direct,relay", "--quiet", "--no-search", "--out", str(tmp_path / "r.json"),
            "--docs", str(docs)]
    assert bench_main(argv) == 0
    figures = json.loads((docs / doc_table.FIGURES_FILE).read_text())
    assert figures["candidates"] == ["direct", "relay"] and figures["command"].startswith("python -m bench --quick")
    assert (docs / doc_table.TABLE_FILE).read_text() == doc_table.render_markdown(figures)


def test_the_http_table_of_a_paired_run_reads_every_row_from_the_same_blocks() -> None:
    paired = {**{f"http_{m}_p{q}_us": v for m, v in (("call", 100.0), ("stdio", 90.0), ("session", 160.0),
                                                       ("stateless", 170.0)) for q in (50, 90, 99)},
              "http_call_cpu_us": 110.0, "http_stdio_cpu_us": 50.0, "http_session_cpu_us": 150.0,
              "http_stdio_added_p50_us": 40.0, "http_session_added_p50_us": 60.0, "http_session_added_vs_stdio": 1.5,
              "http_session_cpu_vs_stdio": 3.0}
    rows = doc_table._http_table({"medians": {"http": {"sidecar": paired}}})
    assert rows[2] == "| fast upstream serving HTTP itself | 100 / 100 / 100 | 0 | - | 110 |"
    assert rows[3].startswith("| sidecar on stdio, in the same blocks | 90 / 90 / 90 | 40 ")
    assert "| 60 | 1.50 x (stdio: 40) | 150 (3.0 x stdio's 50) |" in rows[4]


def test_the_python_floors_read_against_the_relay_targets_are_rendered(tmp_path: Path) -> None:
    run = _run_in_runner_shape()
    session = run["cases"]["session"]["results"]  # type: ignore[index]
    for name, p50 in (("py-floor", 90.0), ("py-threads", 70.0)):
        session[name] = {"median": {"init_ms": 100.0, "list_ms": 150.0, "call_p50_us": p50,
                                    "calls_per_s_64": 1e6 / p50, "vmrss_idle_kb": 20480}}
    run["candidates"] = ["direct", "relay", "py-floor", "py-threads", "sidecar"]
    said = doc_table.write(derive(run), "python -m bench", tmp_path).read_text()
    assert ("The same two relay targets read for the Python floors of this run (no gate, no catalog): "
            "py-floor added p50 3 x the relay's added, calls/s at 64 in flight 0.56 x the relay's; "
            "py-threads added p50 2 x the relay's added, calls/s at 64 in flight 0.71 x the relay's.") in said
