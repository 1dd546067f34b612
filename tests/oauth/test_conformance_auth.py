"""The official conformance suite's client authorization scenarios, with the sidecar as
the client (`client --suite auth`, and the client-credentials extension scenarios).
tests/oauth/conformance_client.py is the command the suite runs: it signs in with
`omb-sidecar signin`, playing the browser, then lists and calls the tools through the
sidecar on stdio. Every scenario must pass; the ones that cannot are listed in
NOT_EXPECTED with the reason.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import anyio
import pytest

from tests.conftest import REPO, child_env
from tests.oauth.oauth_support import SUITE, node22

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

CLIENT = f"{sys.executable} {REPO / 'tests' / 'oauth' / 'conformance_client.py'}"
_SUMMARY = re.compile(r"^[✓✗] (?P<name>[\w./-]+): (?P<passed>\d+) passed, (?P<failed>\d+) failed(?:, (?P<warn>\d+) warn)?",
                      re.M)
EXTENSIONS = ["auth/client-credentials-basic", "auth/client-credentials-jwt"]
# scenario -> why the sidecar does not pass it (empty: it passes every one)
NOT_EXPECTED: dict[str, str] = {}


async def run(argv: list[str], out: Path) -> dict[str, bool]:
    with anyio.fail_after(540):
        done = await anyio.run_process([node22(), str(SUITE), "client", "--command", CLIENT, "-o", str(out), *argv],
                                       check=False, env=child_env(), cwd=str(REPO))
    text = done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")
    found = {m["name"]: m["failed"] == "0" and not m["warn"] for m in _SUMMARY.finditer(text)}
    if not found and "OVERALL" in text:  # a single scenario prints no summary line
        found = {argv[-1]: "OVERALL: PASSED" in text}
    assert found, text[-3000:]
    return found


async def test_every_auth_scenario_passes(tmp_path: Path) -> None:
    results = await run(["--suite", "auth"], tmp_path)
    for scenario in EXTENSIONS:
        folder = tmp_path / scenario.replace("/", "-")
        folder.mkdir()
        results.update(await run(["--scenario", scenario], folder))
    failed = sorted(name for name, ok in results.items() if not ok and name not in NOT_EXPECTED)
    print(f"\nconformance auth: {sum(results.values())}/{len(results)} scenarios passed")
    assert len(results) >= 14
    assert not failed, failed
