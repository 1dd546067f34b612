"""Smoke run of every benchmark with tiny counts.

Fails when a benchmark breaks (a candidate cannot be started, answers wrongly,
a figure goes missing, the report or JSON cannot be produced), never because
something is slow: no assertion here compares a timing with a limit. Peers
that are not installed, and the sidecar before `sidecar/__main__.py` exists,
are skipped with the reason.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import msgspec
import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # `bench` is a top-level package beside `sidecar`, not installed
    sys.path.insert(0, str(REPO))

from bench import catalogs
from bench.__main__ import main as bench_main
from bench.candidates import REPO_ROOT, Candidate, all_candidates
from bench.cases import Settings, measure_catalog, measure_session, percentile
from bench.fast_upstream import FastUpstream
from bench.http_calls import HTTP_CANDIDATES, measure_http
from bench.layouts import time_layout_build
from bench.report import derive, render
from bench.runner import run

TINY = Settings(
    rounds=1, seq_calls=20, pipe_calls=40, windows=(4,), phase_cap_s=5.0, min_calls=5,
    warmup_calls=2, blob_sizes=(20_000,), blob_repeats=1, blob_cap_s=5.0,
    session_catalog=catalogs.PLATFORM, many=tuple(replace(catalogs.TINY, seed=s) for s in (1, 2, 3)),
    three=(catalogs.PLATFORM, replace(catalogs.PLATFORM, seed=40)), timeout_s=30.0,
    cycles=3, block_calls=10, block_warmup=2, block_min_calls=5, burst_calls=40,
)
SESSION_KEYS = {"init_ms", "list_ms", "list_warm_ms", "list_bytes", "blob_20kb_ms", "blob_20kb_reply_bytes"}
CALL_KEYS = {"call_p50_us", "call_p90_us", "call_p99_us", "cpu_us_per_call", "calls_per_s_4", "cpu_us_per_call_4",
             "calls_per_s_4_vs_relay", "added_p50_us", "added_q1_us", "added_q3_us", "vmhwm_calls_kb"}
CANDIDATES = {c.name: c for c in all_candidates()}


def _available(name: str) -> Candidate:
    candidate = CANDIDATES[name]
    if candidate.missing:
        pytest.skip(f"{name}: {candidate.missing}")
    return candidate


# -- data ------------------------------------------------------------------

def test_catalogs_are_deterministic_and_sized() -> None:
    github = catalogs.build_catalog(catalogs.GITHUB)
    assert github == catalogs.build_catalog(catalogs.GITHUB)
    assert len(github) == 425 and len({t["name"] for t in github}) == 425
    assert 1_100_000 < len(msgspec.json.encode(github)) < 1_350_000
    assert [t["name"] for t in github[:2]] == ["echo", "blob"]
    platform = catalogs.build_catalog(catalogs.PLATFORM)
    assert len(platform) == 39 and 40_000 < len(msgspec.json.encode(platform)) < 60_000
    assert "post_to_room" in {t["name"] for t in platform}
    assert len({t["name"] for spec in catalogs.github_set(3) for t in catalogs.build_catalog(spec)}) > 425
    many = catalogs.server_set(12, 100)
    names = {t["name"] for spec in many for t in catalogs.build_catalog(spec)[2:]}
    assert len(many) == 12 and len(names) == 12 * 98


@pytest.mark.parametrize("size", [10, 1_000, 1_000_000])
def test_records_json_is_valid_and_at_least_the_size(size: int) -> None:
    data = catalogs.records_json(size)
    records = json.loads(data)
    assert len(data) >= size and records and records[-1]["id"] == len(records) - 1
    assert data == catalogs.records_json(size)


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert (percentile(values, 50), percentile(values, 99), percentile([3.0], 90)) == (50.0, 99.0, 3.0)


# -- the fast upstream, in process -------------------------------------------

def _reply(upstream: FastUpstream, message: dict[str, object]) -> dict[str, object]:
    line = upstream.handle(msgspec.json.encode({"jsonrpc": "2.0", **message}))
    assert line is not None and line.endswith(b"\n")
    return json.loads(line)  # type: ignore[no-any-return]


def test_fast_upstream_answers_each_method() -> None:
    upstream = FastUpstream(catalogs.PLATFORM)
    init = _reply(upstream, {"id": 1, "method": "initialize", "params": {"protocolVersion": "2025-03-26"}})
    assert init["result"]["protocolVersion"] == "2025-03-26"  # type: ignore[index]
    assert upstream.handle(b'{"jsonrpc":"2.0","method":"notifications/initialized"}') is None
    tools = _reply(upstream, {"id": "a", "method": "tools/list"})["result"]["tools"]  # type: ignore[index]
    assert len(tools) == 39
    echo = _reply(upstream, {"id": 2, "method": "tools/call",
                             "params": {"name": "echo", "arguments": {"text": "x\"y"}}})
    assert json.loads(echo["result"]["content"][0]["text"]) == {"text": "x\"y"}  # type: ignore[index]
    blob = _reply(upstream, {"id": 3, "method": "tools/call",
                             "params": {"name": "blob", "arguments": {"bytes": 5000}}})
    assert len(json.loads(blob["result"]["content"][0]["text"])) > 5  # type: ignore[index]
    assert _reply(upstream, {"id": 4, "method": "nope"})["error"]["code"] == -32601  # type: ignore[index]


# -- every candidate, end to end ----------------------------------------------

@pytest.mark.parametrize("name", list(CANDIDATES))
def test_session_benchmark_runs(name: str, tmp_path: Path) -> None:
    candidate = _available(name)
    figures = measure_session(candidate, TINY, tmp_path, tmp_path / "stderr")
    assert SESSION_KEYS <= figures.keys(), sorted(SESSION_KEYS - figures.keys())
    assert figures["blob_20kb_reply_bytes"] > 0


def test_the_calls_are_measured_side_by_side_and_paired(tmp_path: Path) -> None:
    """Every candidate's session open at once, a block each in turn per cycle: the added
    latency of a cycle is paired with direct's block of that cycle, and every cycle counts."""
    from bench.paired_calls import measure_round, render_rows, summarize

    picked = [_available(n) for n in ("direct", "relay", "sidecar")]
    rounds = [measure_round(picked, TINY, tmp_path) for _ in range(2)]
    assert all(r.cycles == TINY.cycles and not r.errors for r in rounds)
    summary = summarize(rounds, TINY.windows)
    assert summary["cycles"] == 2 * TINY.cycles
    for name in ("relay", "sidecar"):
        figures = summary["figures"][name]
        assert CALL_KEYS <= figures.keys(), sorted(CALL_KEYS - figures.keys())
        assert figures["added_cycles"] == 2 * TINY.cycles
        paired = [b - d for r in rounds for b, d in zip(r.block_p50_us[name], r.block_p50_us["direct"])]
        assert figures["added_p50_us"] == pytest.approx(statistics.median(paired))
    assert summary["figures"]["relay"]["calls_per_s_4_vs_relay"] == 1.0
    assert any(line.startswith("sidecar") for line in render_rows(summary))


@pytest.mark.parametrize("name", [n for n, c in CANDIDATES.items() if not c.single_only])
def test_catalog_benchmark_runs(name: str, tmp_path: Path) -> None:
    candidate = _available(name)
    figures = measure_catalog(candidate, TINY.three, TINY, tmp_path, tmp_path / "stderr")
    assert figures["tools"] == 2 * 39 and figures["list_ms"] > 0 and figures["list_bytes"] > 0


@pytest.mark.parametrize("name", HTTP_CANDIDATES)
def test_http_benchmark_runs(name: str, tmp_path: Path) -> None:
    """Over HTTP and stdio in alternating blocks: every lane's figures, and the added p50s
    paired block by block, the HTTP ones over the stdio one of the same blocks."""
    candidate = _available(name)
    figures = measure_http(candidate, TINY, tmp_path, tmp_path / "stderr")
    for lane in ("call", "direct_stdio", "stdio", "session", "stateless"):
        assert figures[f"http_{lane}_p50_us"] > 0 and figures[f"http_{lane}_p99_us"] > 0, lane
        assert figures[f"http_{lane}_calls"] >= TINY.seq_calls, lane
        assert figures[f"http_{lane}_cpu_us"] > 0, lane  # the server process's own CPU per call
    for mode in ("stdio", "session", "stateless"):
        low, mid, high = (figures[f"http_{mode}_added_{q}_us"] for q in ("q1", "p50", "q3"))
        assert low <= mid <= high, mode
    if figures["http_stdio_added_p50_us"] > 0:
        ratio = figures["http_session_added_p50_us"] / figures["http_stdio_added_p50_us"]
        assert figures["http_session_added_vs_stdio"] == pytest.approx(ratio)


def test_blocks_alternate_lanes_and_pair_them_block_by_block() -> None:
    from bench.blocks import Spread, alternate, paired

    order: list[str] = []

    def lane(name: str, seconds: float) -> Callable[[int], list[float]]:
        def run(n: int) -> list[float]:
            order.append(name)
            return [seconds] * n
        return run

    records = alternate({"a": lane("a", 1e-4), "b": lane("b", 3e-4), "c": lane("c", 2e-4)}, {}, 3, 2)
    assert sorted(order) == ["a"] * 3 + ["b"] * 3 + ["c"] * 3  # every lane once a block
    assert all(sorted(order[k:k + 3]) == ["a", "b", "c"] for k in (0, 3, 6))
    first = list(order)
    order.clear()
    alternate({"a": lane("a", 1e-4), "b": lane("b", 3e-4), "c": lane("c", 2e-4)}, {}, 3, 2)
    assert order == first  # the shuffle is seeded: a run is repeatable
    assert paired(records, "b", "a") == pytest.approx([200.0] * 3)
    assert len(records["a"].times) == 6 and records["a"].cpu_per_call_us() is None  # no pid: no CPU
    assert Spread.of([1.0, 2.0, 3.0, 4.0, 100.0]).median == 3.0


def test_http_added_latency_is_rendered_from_the_paired_figures() -> None:
    """The HTTP rows come from the sidecar's own paired measurement; the report renders them."""
    def case(**by_name: dict[str, float]) -> dict[str, object]:
        return {"results": {n: {"status": "ok", "median": m, "rounds": [m]} for n, m in by_name.items()}}

    paired = {**{f"http_{m}_p{q}_us": v for m, v in (("call", 300.0), ("stdio", 140.0), ("session", 450.0),
                                                       ("stateless", 500.0)) for q in (50, 90, 99)},
              "http_stdio_added_p50_us": 100.0, "http_session_added_p50_us": 150.0,
              "http_stateless_added_p50_us": 200.0, "http_session_added_vs_stdio": 1.5,
              "http_stateless_added_vs_stdio": 2.0}
    results = {
        "candidates": ["direct", "relay", "py-floor", "py-threads", "sidecar"],
        "cases": {
            "session": case(direct={"call_p50_us": 40.0}, sidecar={"call_p50_us": 140.0, "cpu_us_per_call": 20.0},
                            relay={"call_p50_us": 60.0, "calls_per_s_64": 40_000.0},
                            **{"py-floor": {"call_p50_us": 100.0, "calls_per_s_64": 20_000.0},
                               "py-threads": {"call_p50_us": 80.0, "calls_per_s_64": 30_000.0}}),
            "http": case(sidecar=paired),
            "many": case(), "three": case(),
        },
        "machine": {"cpu": "x", "cores": 2, "implementation": "CPython", "python": "3.11", "kernel": "6"},
        "settings": {"rounds": 1, "seq_calls": 1, "pipe_calls": 1, "phase_cap_s": 1.0}, "duration_s": 1.0,
    }
    derive(results)
    targets = results["targets"]
    assert isinstance(targets, list)
    verdicts = {v["target"]: v for v in targets}
    assert verdicts["HTTP session added p50 <= 1.5x stdio's added"]["status"] == "pass"
    assert verdicts["HTTP stateless added p50 <= 1.5x stdio's added"]["status"] == "miss"  # 200 / 100
    assert verdicts["added p50 <= 1.3x py-floor's added"]["status"] == "miss"  # 100 / 60
    text = "\n".join(render(results))
    assert "fast upstream serving HTTP itself (aiohttp): 300 / 300 / 300" in text
    assert "sidecar, Mcp-Session-Id session: 450 / 450 / 450; added p50 150.0 (1.50x" in text
    assert "sidecar, stateless 2026-07-28: 500 / 500 / 500; added p50 200.0" in text
    assert "py-floor, the least a Python asyncio proxy does: added p50 3.00x the relay's added, " \
           "calls/s at 64 in flight 0.50x the relay's" in text
    assert "py-threads, the same on blocking threads, no event loop: added p50 2.00x the relay's added, " \
           "calls/s at 64 in flight 0.75x the relay's" in text


def test_layout_build_benchmark_runs() -> None:
    _available("sidecar")
    figures = time_layout_build(repeats=1)
    assert "error" not in figures, figures.get("error")
    assert figures["merged_3x425_tools"] == 1275
    for layout in ("full", "bridged", "trio", "cap"):
        assert figures[f"layout_{layout}_tools"] > 0 and figures[f"layout_{layout}_bytes"] > 0


def test_missing_candidate_is_reported_not_raised(tmp_path: Path) -> None:
    ghost = Candidate("direct", merges=False, missing="not installed here")
    results = derive(run(TINY, [CANDIDATES["relay"], ghost], progress=lambda _: None))
    entry = results["cases"]["session"]["results"]["direct"]
    assert entry == {"status": "missing", "reason": "not installed here", "errors": []}
    assert any("missing: not installed here" in line for line in render(results))


def test_runner_report_and_json(tmp_path: Path) -> None:
    lines: list[str] = []
    picked = [CANDIDATES["direct"], CANDIDATES["relay"]]
    results = derive(run(TINY, picked, progress=lines.append))
    # the wheel's build (or its venv reused), then + direct with a fresh data folder, + the
    # calls side by side (over HTTP only the sidecar runs: its baselines are inside)
    assert lines[0].startswith("wheel built and installed") and "built wheel" in results["machine"]["launched"]
    lines = lines[1:]
    assert len(lines) == 3 * len(picked) + 2 and all(line.endswith("ok") for line in lines)
    for case in ("session", "many", "three"):
        for name in ("direct", "relay"):
            assert results["cases"][case]["results"][name]["status"] == "ok"
    assert results["cases"]["http"]["results"]["direct"]["reason"] == "not measured in this case"
    assert results["cases"]["http"]["results"]["relay"]["reason"] == "not measured in this case"
    relay = results["cases"]["session"]["results"]["relay"]["median"]
    assert {"call_p50_us", "added_p50_us", "cpu_us_per_call", "calls_per_s_4", "calls_per_s_4_vs_relay"} <= relay.keys()
    assert "added_p50_us" in relay and results["ratios"]["session.call_p50_us"]["relay"]["x_relay"] == 1.0
    assert {t["status"] for t in results["targets"]} == {"n/a"}  # no sidecar in this run
    text = "\n".join(render(results))
    assert "echo call p50 (us)" in text and results["machine"]["cpu"] in text
    json.dumps(results)


def test_command_line_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench.json"
    assert bench_main(["--quick", "--only", "direct,relay", "--quiet", "--out", str(out)]) == 0
    assert "targets (sidecar, this run):" in capsys.readouterr().out
    assert json.loads(out.read_text())["cases"]["session"]["results"]["relay"]["status"] == "ok"


def test_gate_benchmark_runs() -> None:
    """The in-memory gate figures: pass-through calls, shaping and a query (never judged)."""
    from bench.gate import time_gate

    figures = time_gate(repeats=1)
    assert "error" not in figures, figures.get("error")
    for key in ("gate_route_only_us", "gate_default_us", "gate_full_us", "shape_1mb_ms", "shape_20mb_ms", "query_20mb_ms",
                "gate_with_secrets_us", "redact_1mb_ms"):
        assert float(figures[key]) > 0, key


def test_the_call_profile_harness_reads_cpu_per_call(tmp_path: Path) -> None:
    """`python -m bench.profile_calls --plain`: a real sidecar driven with calls in flight."""
    _available("sidecar")
    from bench.profile_calls import drive

    rate, cpu = drive([sys.executable, "-m", "sidecar"], REPO_ROOT, 300, 16)
    assert rate > 0 and cpu > 0
    before = os.sched_getaffinity(0)
    rate, cpu = drive([sys.executable, "-m", "sidecar"], REPO_ROOT, 100, 1, pin=True)  # `--pin`
    assert rate > 0 and cpu > 0 and os.sched_getaffinity(0) == before  # this process freed again


def test_the_call_counts_are_per_call_and_exact() -> None:
    """`python -m bench.profile_calls --counts`: the run at 2N minus the run at N leaves
    what each call costs; the gate's one ending (`Gate.close`) runs once per call, whichever
    way the call ran (a task, or a plain call started inline), whatever start-up did."""
    _available("sidecar")
    from bench.profile_calls import per_call_counts

    counts = per_call_counts(REPO_ROOT, 40, 1)
    assert counts["sidecar/gate/chain.py:close"] == 1
    assert sum(counts.values()) > 30  # a whole call's Python calls (about 49 since round 39), not a few strays


def test_first_sight_is_timed_in_an_interpreter_without_openssl() -> None:
    """The in-memory first sight runs where `hashlib` has the interpreter's own SHA-256, as a
    stdio start's does, whatever this process has loaded."""
    import hashlib

    from bench.first_sight import time_first_sight

    hashlib.sha256(b"")  # this process may well have OpenSSL's: the figure must not depend on it
    figures = time_first_sight(1)
    assert "error" not in figures, figures.get("error")
    assert figures["tools"] == 425 and figures["same_verdict"] == 1.0
    assert figures["prepared_longest_ms"] > 0
    assert figures["openssl_sha256"] == 0.0
