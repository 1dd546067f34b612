"""The compact listing through a real engine turn (pi 0.73.1, issue 25).

A bot that asks for the compact listing (`features.compactListing`) gets every tool with
its description ending in a one-line signature and an open object schema. The fake model
calls a compactly listed tool first with arguments that do not fit (the real schema comes
back in the error), then again with arguments that do, and that call reaches the upstream.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import REPO, agents_entry, canary, fault_entry, run_turn
from engine_helpers import engine_path as find_engine
from test_engine_turns import assert_clean, fault_calls, pi_spec
from turn_facts import model_requests, tool_results

pytestmark = [pytest.mark.engines, pytest.mark.e2e, pytest.mark.timeout(300)]


def offered(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The functions pi offered the model, by name (chat dialect)."""
    tools = model_requests(result)[0]["body"]["tools"]
    return {t["function"]["name"]: t["function"] for t in tools}


def test_pi_calls_a_compactly_listed_tool_and_retries_after_a_schema_error(tmp_path: Path) -> None:
    pi: Callable[[str], str] = find_engine
    secret, record = canary(), tmp_path / "fault.jsonl"
    settings = {"bot": {"id": "pia"}, "features": {"compactListing": True}, "mcpServers": {
        "agents": agents_entry(), "fault": fault_entry(f"record={record}", env={"FAULT_TOKEN": secret})}}
    steps = [{"name": "fault__echo", "arguments": {"nonse": "typo"}},
             {"name": "fault__echo", "arguments": {"nonce": "compact-ok"}}]
    spec = pi_spec(tmp_path, pi("pi"), settings, steps, [secret])
    # This tree's sidecar, not the one installed in the shared venv (the default command).
    spec["options"]["sidecar"] = [sys.executable, "-m", "sidecar"]
    spec["env"]["PYTHONPATH"] = str(REPO)
    result = run_turn(spec, tmp_path)
    assert_clean(result)
    echo = offered(result)["fault__echo"]
    assert "Arguments: (nonce: string)" in echo["description"]
    assert "nonce" not in json.dumps(echo["parameters"])  # the schema is not listed, only the signature
    refused, answered = tool_results(result, "chat")
    assert "do not fit" in refused.text and "missing 'nonce'" in refused.text and '"required":["nonce"]' in refused.text
    assert "compact-ok" in answered.text
    assert fault_calls(record) == ["echo"]  # only the call that fits reached the upstream
