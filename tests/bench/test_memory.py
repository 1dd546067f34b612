"""Smoke run of `bench.memory`: one idle start of the sidecar and of the fast upstream, read
and rendered (the MB-by-cause imports are left out: they take a minute)."""

from __future__ import annotations

from bench.candidates import REPO_ROOT
from bench.memory import measure_tree, render_docs


def test_the_memory_bench_reads_an_idle_sidecar_and_renders_its_tables() -> None:
    result = measure_tree(REPO_ROOT, starts=1, with_causes=False)
    assert 0 < result["direct_mb"] and 0 < result["sidecar_mb"] < 200
    assert "sidecar.front.dispatcher" in result["only_the_sidecars"]
    assert "ssl" not in result["only_the_sidecars"]  # the bench's stdio face loads no OpenSSL
    pages = render_docs({"measured": {"command": "smoke", "commit": "x", "date": "now"}, "result": {"trees": [result]}})
    assert set(pages) == {"memory-causes.md", "memory-live.md"}
    assert "idle VmRSS, the sidecar" in pages["memory-causes.md"]
