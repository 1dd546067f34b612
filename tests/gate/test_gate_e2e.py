"""The gate through the real sidecar process: the audit file (its mode, one line per call) and
the secrets kept out of it and of stderr. Every decision, the budget and held results are
driven in memory (tests/gate/test_gate_in_memory.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

CANARY_ENV = "canary-env-7c1d2e9f"
CANARY_ARG = "canary-arg-55aa11bb"


def text_of(response: dict[str, Any]) -> str:
    return "".join(c.get("text", "") for c in response["result"]["content"])


async def start(raw_sidecar, write_config, fault_server_entry, tools: list[str], env=None, **top: Any):
    config = write_config({"f": fault_server_entry(env={"SECRET_TOKEN": CANARY_ENV}), "g": fault_server_entry()}, **top)
    sc = raw_sidecar(config, "--log-level", "DEBUG", env=env)
    return sc, tools


async def test_allowed_call_and_the_audit_line(raw_sidecar, write_config, fault_server_entry, tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    config = write_config({"f": fault_server_entry(env={"SECRET_TOKEN": CANARY_ENV})}, audit={"file": str(audit)})
    async with raw_sidecar(config, "--log-level", "DEBUG") as sc:
        await sc.initialize()
        await sc.wait_for_tools(["f__echo"])
        assert text_of(await sc.call("f__echo", {"nonce": CANARY_ARG})) == CANARY_ARG
        await sc.call("f__nope", {})
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(r["tool"], r["outcome"]) for r in lines] == [("f__echo", "completed"), ("-", "failed")]
    assert lines[0]["upstream"] == "f" and lines[0]["charge"] == "pass" and lines[0]["held"] is False
    assert oct(audit.stat().st_mode & 0o777) == "0o600"
    everything = audit.read_text() + sc.stderr
    assert CANARY_ARG not in audit.read_text()
    assert CANARY_ENV not in everything



async def test_an_upstream_error_reaches_the_engine_with_its_code_message_and_data(
        raw_sidecar, write_config, fault_server_entry) -> None:
    config = write_config({"f": fault_server_entry(env={"SECRET_TOKEN": CANARY_ENV})})
    data = {"retryAfter": 30, "fields": ["a", "b"], "echo": f"sent {CANARY_ENV}"}
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["f__error"])
        response = await sc.call("f__error", {"code": -32042, "message": f"quota spent for {CANARY_ENV}", "data": data})
    assert response["error"] == {"code": -32042, "message": "quota spent for [redacted]",
                                 "data": {**data, "echo": "sent [redacted]"}}
