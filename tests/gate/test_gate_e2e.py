"""The gate through the real sidecar: every decision, budgets, held results and the audit."""

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


async def test_selection_and_deny_rules_give_the_same_bytes_as_unknown(raw_sidecar, write_config, fault_server_entry) -> None:
    config = write_config(
        {"f": fault_server_entry(), "g": fault_server_entry()},
        bot={"selection": {"servers": ["f"]}},
        grants={"deny": ["f__crash", "*__hang"]},
    )
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        tools = await sc.wait_for_tools(["f__echo"])
        names = {t["name"] for t in tools}
        assert not any(n.startswith("g__") for n in names)
        assert "f__crash" not in names and "f__hang" not in names
        refusals = {}
        for name in ("g__echo", "f__crash", "f__hang", "f__nothing"):
            response = await sc.call(name, {})
            refusals[name] = json.dumps(response["error"]).replace(name, "NAME")
        assert len(set(refusals.values())) == 1


async def test_policy_rule_hook_and_fail_closed(raw_sidecar, write_config, fault_server_entry) -> None:
    cases = {
        "tests.gate.hooks:refuse_sleep": ("f__sleep", "no sleeping for test-bot"),
        "tests.gate.hooks:explode": ("f__echo", "the policy hook failed (RuntimeError)"),
        "tests.gate.hooks:stall": ("f__echo", "did not answer within 1s"),
        "tests.gate.hooks:nonsense": ("f__echo", "returned no valid decision"),
    }
    for hook, (tool, words) in cases.items():
        config = write_config({"f": fault_server_entry()}, policy={"hook": hook, "hookTimeoutSeconds": 1})
        async with raw_sidecar(config) as sc:
            await sc.initialize()
            await sc.wait_for_tools([tool])
            response = await sc.call(tool, {"seconds": 0, "nonce": "n"})
            assert response["result"]["isError"] is True, hook
            assert words in text_of(response), hook
            assert (await sc.request("ping"))["result"] == {}


async def test_a_hook_cannot_change_the_call(raw_sidecar, write_config, fault_server_entry) -> None:
    config = write_config({"f": fault_server_entry()}, policy={"hook": "tests.gate.hooks:tamper"})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["f__echo"])
        assert text_of(await sc.call("f__echo", {"nonce": "original"})) == "original"


async def test_deny_rule_and_consequential_without_approval(raw_sidecar, write_config, fault_server_entry) -> None:
    entry = {**fault_server_entry(), "consequential": ["crash"]}
    config = write_config({"f": entry}, policy={"rules": [{"tool": "f__sleep", "action": "deny", "reason": "sleep is off"}],
                                                "requireConfirmation": True})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["f__crash"])
        assert "sleep is off" in text_of(await sc.call("f__sleep", {"seconds": 0}))
        refused = await sc.call("f__crash", {})
        assert refused["result"]["isError"] and "Confirmation required" in text_of(refused)
        assert text_of(await sc.call("f__echo", {"nonce": "alive"})) == "alive"  # never ran the crash


async def test_consequential_with_an_approval_hook_runs(raw_sidecar, write_config, fault_server_entry) -> None:
    entry = {**fault_server_entry(), "consequential": ["echo"]}
    config = write_config({"f": entry}, policy={"requireConfirmation": True, "hook": "tests.gate.hooks:approve_consequential"})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["f__echo"])
        assert text_of(await sc.call("f__echo", {"nonce": "approved"})) == "approved"


async def test_large_json_is_shaped_and_queried(raw_sidecar, write_config, fault_server_entry) -> None:
    config = write_config({"f": fault_server_entry()})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["f__records", "query_result"])
        response = await sc.call("f__records", {"count": 60_000}, timeout=60)
        shown = text_of(response)
        assert len(shown) <= 8000
        view = json.loads(shown)
        assert view["shape"]["array"] == 60_000 and view["records"]["first"][0]["id"] == 0
        handle = view["handle"]
        answer = await sc.call("query_result", {"handle": handle, "query": "[?nested.v > `59997`].{id: id, name: name}"})
        assert json.loads(text_of(answer)) == [{"id": 59998, "name": "rec-59998"}, {"id": 59999, "name": "rec-59999"}]
        whole = await sc.call("query_result", {"handle": handle, "query": "@"}, timeout=60)
        assert len(text_of(whole)) <= 8000 and "handle" in json.loads(text_of(whole))
        explode = "[*].[@,@,@,@,@,@,@,@][].[@,@,@,@,@,@,@,@][].[@,@,@,@,@,@,@,@][].[@,@,@,@]"
        stopped = await sc.call("query_result", {"handle": handle, "query": explode}, timeout=60)
        assert stopped["result"]["isError"] and "narrow it" in text_of(stopped)
        missing = await sc.call("query_result", {"handle": "h_forged", "query": "@"})
        assert "no held result" in text_of(missing)
        assert text_of(await sc.call("f__echo", {"nonce": "still serving"})) == "still serving"


async def test_large_text_is_cut_and_the_budget_env_wins(raw_sidecar, write_config, fault_server_entry) -> None:
    config = write_config({"f": fault_server_entry()})
    async with raw_sidecar(config, env={"OMB_MCP_RESULT_BUDGET": "1000"}) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["f__big"])
        shown = text_of(await sc.call("f__big", {"bytes": 50_000}))
        assert len(shown) <= 1000 and "characters left out" in shown


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
