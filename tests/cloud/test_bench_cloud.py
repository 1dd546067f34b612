"""Smoke run of `python -m bench.cloud --quick`: every figure is produced (no timing is
judged here; the README gives the measured ones)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.cloud import main

pytestmark = pytest.mark.timeout(180)


def test_the_cloud_bench_produces_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "cloud.json"
    main(["--quick", "--out", str(out)])
    figures = json.loads(out.read_text())
    assert set(figures["throughput (calls/s, 32 in flight)"]) == {"1 replica", "2 replicas"}
    assert len(figures["held result, 256 KB JSON"]) == 4
    assert "added by tracing (us p50)" in figures["tracing"]
    assert all(v > 0 for v in figures["throughput (calls/s, 32 in flight)"].values())
