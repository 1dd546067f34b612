"""Through the real HTTP front and its health schedule (issue 22, classes 1 and 12):

* a server whose last check failed, fixed since, is tried again at start without holding
  up `initialize`, and its left-out line names the real period and `omb-sidecar check NAME`;
* once it joins, its `resultChars` budget and the redaction of its env secret apply exactly
  as they do to the same kind of server configured healthy at start;
* a server that fails at start, where no call was made, is not said to have had "the call"
  not retried."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest

from sidecar.config import load_config
from sidecar.mounts.health import CheckResult, HealthFile
from tests.cloud.cloud_support import Client, fault_entry, text_of, write_config
from tests.http.http_support import TOKEN, open_http_sidecar

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

SECRET = "sk-live-Q7w2Zr9xK4pL8mN3"
SETTINGS = {"resultChars": 600, "env": {"API_KEY": SECRET}, "pinning": "off"}


def _config(tmp_path: Path) -> Path:
    servers = {
        "steady": fault_entry("name=steady", **SETTINGS),
        # its check takes a while: it must stay off the engine's critical path
        "gated": fault_entry("name=gated", "init-delay=1.5", **SETTINGS),
        "broken": fault_entry("name=broken", "exit-on-start=3"),
    }
    return write_config(tmp_path, servers, data={"folder": str(tmp_path / "data")}, face={"listWaitSeconds": 5},
                        health={"retryFailedSeconds": 3600, "recheckStartedSeconds": 3600})


def _failed_before(config_path: Path, tmp_path: Path) -> None:
    """The health file as a failed check left it (the server was fixed since)."""
    gated = next(s for s in load_config(config_path).servers if s.alias == "gated")
    health = HealthFile(tmp_path / "data" / "mcp-health.json")
    health.record(gated, CheckResult(name="gated", outcome="failed", reason="it stopped (exit code 3)"), time.time())


async def _seen(client: Client, alias: str) -> dict[str, Any]:
    """The budget cut, and the upstream's own environment as the engine reads it."""
    big = text_of(await client.call(f"{alias}__big", {"bytes": 5000}))
    env = json.loads(text_of(await client.call(f"{alias}__env", {})))
    return {"big": len(big), "cut": len(big) < 1500, "secret_shown": SECRET in json.dumps(env), "key": env["API_KEY"]}


async def test_a_fixed_server_is_tried_at_start_and_joins_with_every_setting(tmp_path: Path) -> None:
    config = _config(tmp_path)
    _failed_before(config, tmp_path)
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc, aiohttp.ClientSession() as http:
        client = Client(sc.base, TOKEN, http)
        started = time.monotonic()
        await client.initialize()
        assert time.monotonic() - started < 1.5  # the retry runs beside, not before, the engine's start
        first = await client.tools()
        assert "gated__echo" not in first and "steady__echo" in first
        with anyio.fail_after(60):  # tried again at start, not an hour later
            while "gated__big" not in await client.tools():
                await anyio.sleep(0.1)
        steady, gated = await _seen(client, "steady"), await _seen(client, "gated")
        assert steady["cut"] and not steady["secret_shown"] and "[redacted]" in steady["key"]
        assert gated == steady
    stderr = sc.stderr
    left_out = next(line for line in stderr.splitlines() if "'gated' is left out" in line)
    assert "every 1 hour (health.retryFailedSeconds)" in left_out and "`omb-sidecar check gated`" in left_out
    assert "30 minutes" not in left_out
    assert "'gated' passed its check" in stderr
    assert "not retried" not in stderr  # 'broken' failed its start: no call was ever made
    assert "broken" in stderr
    assert SECRET not in stderr
    kept = json.loads((tmp_path / "data" / "mcp-health.json").read_text())
    assert kept["gated"]["ok"] is True
