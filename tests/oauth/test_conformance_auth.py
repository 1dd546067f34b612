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
# run one by one: the 2026-07-28 scenarios (`--suite auth` runs the dated ones), the
# client-credentials extension, and the 2025-03-26 back-compat ones
SINGLES = {
    "auth/resource-mismatch": "2026-07-28", "auth/offline-access-scope": "2026-07-28",
    "auth/offline-access-not-supported": "2026-07-28", "auth/authorization-server-migration": "2026-07-28",
    "auth/iss-supported": "2026-07-28", "auth/iss-not-advertised": "2026-07-28",
    "auth/iss-supported-missing": "2026-07-28", "auth/iss-wrong-issuer": "2026-07-28",
    "auth/iss-unexpected": "2026-07-28", "auth/iss-normalized": "2026-07-28",
    "auth/metadata-issuer-mismatch": "2026-07-28", "auth/scope-step-up": "2026-07-28",
    "auth/client-credentials-basic": "", "auth/client-credentials-jwt": "",
    "auth/2025-03-26-oauth-metadata-backcompat": "2025-03-26", "auth/2025-03-26-oauth-endpoint-fallback": "2025-03-26",
}
# scenario -> why the sidecar does not pass it
NOT_EXPECTED = {
    "auth/2025-03-26-oauth-endpoint-fallback": (
        "the server publishes no metadata, so it never advertises PKCE S256; the sidecar signs in only where "
        "S256 is advertised (the guessed /authorize, /token endpoints of 2025-03-26 are not used)"),
}


async def run(argv: list[str], out: Path) -> dict[str, bool]:
    with anyio.fail_after(540):
        done = await anyio.run_process([node22(), str(SUITE), "client", "--command", CLIENT, "-o", str(out), *argv],
                                       check=False, env=child_env(), cwd=str(REPO))
    text = done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")
    found = {m["name"]: m["failed"] == "0" and not m["warn"] for m in _SUMMARY.finditer(text)}
    if "--scenario" in argv:  # one scenario prints its checks and an overall verdict
        name = argv[argv.index("--scenario") + 1]
        found = {name: "OVERALL: PASSED" in text and "0 warnings" in text}
        if not found[name]:
            WHY[name] = [line[-240:] for line in text.splitlines() if re.search(r"FAILURE|WARNING|timed out", line)]
    assert found, text[-3000:]
    return found


WHY: dict[str, list[str]] = {}


async def test_every_dated_auth_scenario_passes(tmp_path: Path) -> None:
    results = await run(["--suite", "auth"], tmp_path)
    print(f"\nconformance --suite auth: {sum(results.values())}/{len(results)} scenarios passed")
    assert len(results) >= 14
    assert not sorted(name for name, ok in results.items() if not ok), results


async def test_the_other_auth_scenarios(tmp_path: Path) -> None:
    results: dict[str, bool] = {}
    limit = anyio.Semaphore(3)

    async def one(scenario: str, version: str) -> None:
        folder = tmp_path / scenario.replace("/", "-")
        folder.mkdir()
        async with limit:
            when = ["--spec-version", version] if version else []
            results.update(await run([*when, "--timeout", "120000", "--scenario", scenario], folder))

    async with anyio.create_task_group() as group:
        for scenario, version in SINGLES.items():
            group.start_soon(one, scenario, version)
    print(f"\nconformance, one by one: {sum(results.values())}/{len(results)} passed")
    unexpected = sorted(n for n, ok in results.items() if not ok and n not in NOT_EXPECTED)
    assert not unexpected, {name: WHY.get(name) for name in unexpected}
    assert all(not results[n] for n in NOT_EXPECTED), "a scenario listed as not passing passes now: unlist it"
