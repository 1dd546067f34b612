"""Smoke runs of the HTTP profile (`bench.profile_calls --http`) and of the HTTP
decomposition (`bench.http_calls --parts`): real sidecars and real upstreams, tiny
counts. They fail when a bench breaks, never when something is slow."""

from __future__ import annotations

import pytest

from bench.candidates import REPO_ROOT
from bench.cases import Settings
from bench.http_parts import measure_parts, print_parts
from bench.profile_http import group_of, opcodes_of, plain_cpu

pytestmark = pytest.mark.timeout(240)


def test_the_bytecodes_of_an_http_call_are_counted_per_phase_and_grouped() -> None:
    counts = opcodes_of(REPO_ROOT, calls=4, warmup=3)
    assert set(counts) == {"session", "stateless"}
    for phase, rows in counts.items():
        assert sum(rows.values()) > 1000, phase  # a whole request: aiohttp, the front, the call
        groups = {group_of(key) for key in rows}
        assert {"sidecar: HTTP front", "aiohttp: Response, writer"} <= groups, (phase, groups)
    assert "sidecar/front/http/stateless.py:judge" in counts["stateless"]
    assert "sidecar/front/http/stateless.py:judge" not in counts["session"]


def test_the_groups_name_who_runs_a_function() -> None:
    assert group_of("aiohttp/web_urldispatcher.py:resolve") == "aiohttp: app, router, middlewares"
    assert group_of("sidecar/front/http/routes.py:_post") == "sidecar: HTTP front"
    assert group_of("sidecar/wire/outbox.py:get_nowait") == "sidecar: the front's per-request objects"
    assert group_of("sidecar/wire/outbox.py:flush") == "sidecar: the call (dispatcher, gate, wire, upstream)"
    assert group_of("asyncio/events.py:_run") == "asyncio"


def test_the_cpu_per_http_call_is_read_for_each_phase() -> None:
    found = plain_cpu(REPO_ROOT, calls=20, warmup=5)
    assert set(found) == {"session", "stateless"} and all(v > 0 for v in found.values())


def test_the_decomposition_sets_each_sidecar_beside_the_direct_servers(capsys: pytest.CaptureFixture[str]) -> None:
    seen = measure_parts(Settings(seq_calls=20, warmup_calls=5, timeout_s=60.0), 1, [REPO_ROOT], block=5)
    (figures,) = seen[REPO_ROOT]
    for lane in ("direct_stdio", "stdio", "call", "session", "stateless"):
        assert figures[f"http_{lane}_p50_us"] > 0 and figures[f"http_{lane}_cpu_us"] > 0, lane
    print_parts(seen)
    printed = capsys.readouterr().out
    assert "http_session_added_vs_stdio" in printed and "stateless_beyond_bare_cpu_us" in printed
