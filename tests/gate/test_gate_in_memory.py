"""The gate in memory: grants, policy, confirmation rules, the result budget and held
results, each decided before anything reaches an upstream (SPEC §5)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.gate import hooks
from tests.harness import FakeServer, ScriptedCall, echo, in_memory, text_of, tool

TOOLS = [tool("echo"), tool("crash"), tool("hang"), tool("sleep")]


def _servers(*aliases: str, on_call: Any = echo) -> dict[str, FakeServer]:
    return {alias: FakeServer(TOOLS, name=alias, on_call=on_call) for alias in aliases}


async def test_selection_and_deny_rules_give_the_same_bytes_as_unknown() -> None:
    servers = _servers("f", "g")
    async with in_memory(servers, bot={"selection": {"servers": ["f"]}},
                         grants={"deny": ["f__crash", "*__hang"]}) as sidecar:
        engine = await sidecar.engine()
        names = set(await engine.tool_names())
        assert names == {"f__echo", "f__sleep", "query_result"}
        refusals = {}
        for name in ("g__echo", "f__crash", "f__hang", "f__nothing"):
            answer = await engine.call_and_wait(name)
            refusals[name] = json.dumps(answer["error"]).replace(name, "NAME")
        assert len(set(refusals.values())) == 1
        assert servers["f"].frames("tools/call") == [] and servers["g"].starts == 0  # g is never even started


@pytest.mark.parametrize(("hook", "tool_name", "words"), [
    ("tests.gate.hooks:refuse_sleep", "f__sleep", "no sleeping for test-bot"),
    ("tests.gate.hooks:explode", "f__echo", "the policy hook failed (RuntimeError)"),
    ("tests.gate.hooks:nonsense", "f__echo", "returned no valid decision"),
])
async def test_a_policy_hook_refuses_and_a_broken_hook_fails_closed(hook: str, tool_name: str, words: str) -> None:
    servers = _servers("f")
    async with in_memory(servers, bot={"id": "test-bot"}, policy={"hook": hook, "hookTimeoutSeconds": 1}) as sidecar:
        engine = await sidecar.engine()
        answer = await engine.call_and_wait(tool_name, {"text": "n"})
        assert answer["result"]["isError"] is True
        assert words in text_of(answer)
        assert servers["f"].frames("tools/call") == []


async def test_a_hook_that_blocks_its_thread_past_the_timeout_fails_closed() -> None:
    servers = _servers("f")
    hooks.RELEASE.clear()
    try:
        async with in_memory(servers, policy={"hook": "tests.gate.hooks:block", "hookTimeoutSeconds": 0.2}) as sidecar:
            engine = await sidecar.engine()
            answer = await engine.call_and_wait("f__echo", {"text": "n"})
            assert answer["result"]["isError"] is True
            assert "did not answer within 0.2s" in text_of(answer)
            assert servers["f"].frames("tools/call") == []
    finally:
        hooks.RELEASE.set()


async def test_a_hook_cannot_change_the_call() -> None:
    servers = _servers("f")
    async with in_memory(servers, policy={"hook": "tests.gate.hooks:tamper"}) as sidecar:
        engine = await sidecar.engine()
        assert text_of(await engine.call_and_wait("f__echo", {"text": "original", "nonce": "original"})) == "original"
        assert servers["f"].frames("tools/call")[0]["params"]["arguments"]["nonce"] == "original"


async def test_a_deny_rule_and_a_consequential_tool_without_approval_never_run() -> None:
    servers = _servers("f")
    async with in_memory(servers, entries={"f": {"consequential": ["crash"]}},
                         policy={"rules": [{"tool": "f__sleep", "action": "deny", "reason": "sleep is off"}],
                                 "requireConfirmation": True}) as sidecar:
        engine = await sidecar.engine()
        assert "sleep is off" in text_of(await engine.call_and_wait("f__sleep"))
        refused = await engine.call_and_wait("f__crash")
        assert refused["result"]["isError"] and "Confirmation required" in text_of(refused)
        assert text_of(await engine.call_and_wait("f__echo", {"text": "alive"})) == "alive"
        assert [f["params"]["name"] for f in servers["f"].frames("tools/call")] == ["echo"]


async def test_a_consequential_tool_with_an_approval_hook_runs() -> None:
    async with in_memory(_servers("f"), entries={"f": {"consequential": ["echo"]}},
                         policy={"requireConfirmation": True, "hook": "tests.gate.hooks:approve_consequential"}) as sidecar:
        engine = await sidecar.engine()
        assert text_of(await engine.call_and_wait("f__echo", {"text": "approved"})) == "approved"


def _records(call: ScriptedCall) -> None:
    count = int(call.arguments.get("count", 0))
    records = [{"id": i, "name": f"rec-{i}", "tags": ["x", "y"], "nested": {"v": i}} for i in range(count)]
    call.answer(json.dumps(records))


async def test_large_json_is_shaped_held_and_queried_through_the_same_budget() -> None:
    servers = {"f": FakeServer([tool("records"), tool("echo")], on_call=_records)}
    async with in_memory(servers) as sidecar:
        engine = await sidecar.engine()
        shown = text_of(await engine.call_and_wait("f__records", {"count": 60_000}, within=60))  # 4 MB of JSON
        assert len(shown) <= 8000
        view = json.loads(shown)
        assert view["shape"]["array"] == 60_000 and view["records"]["first"][0]["id"] == 0
        handle = view["handle"]
        answer = await engine.call_and_wait("query_result", {"handle": handle,
                                                             "query": "[?nested.v > `59997`].{id: id, name: name}"})
        assert json.loads(text_of(answer)) == [{"id": 59998, "name": "rec-59998"}, {"id": 59999, "name": "rec-59999"}]
        whole = text_of(await engine.call_and_wait("query_result", {"handle": handle, "query": "@"}, within=60))
        assert len(whole) <= 8000 and "handle" in json.loads(whole)
        missing = await engine.call_and_wait("query_result", {"handle": "h_forged", "query": "@"})
        assert "no held result" in text_of(missing)
        assert len(servers["f"].frames("tools/call")) == 1  # every query answered from what is held


async def test_a_query_that_explodes_is_stopped_and_the_session_serves() -> None:
    servers = {"f": FakeServer([tool("records"), tool("echo")], on_call=_records)}
    async with in_memory(servers, budgets={"querySeconds": 0.5}) as sidecar:  # whichever limit comes first
        engine = await sidecar.engine()
        handle = json.loads(text_of(await engine.call_and_wait("f__records", {"count": 2000})))["handle"]
        explode = "[*].[@,@,@,@,@,@,@,@][].[@,@,@,@,@,@,@,@][].[@,@,@,@,@,@,@,@][].[@,@,@,@]"
        stopped = await engine.call_and_wait("query_result", {"handle": handle, "query": explode}, within=60)
        assert stopped["result"]["isError"] and "narrow it" in text_of(stopped)
        assert text_of(await engine.call_and_wait("query_result", {"handle": handle, "query": "length(@)"})) == "2000"


async def test_a_held_result_belongs_to_its_session() -> None:
    servers = {"f": FakeServer([tool("records")], on_call=_records)}
    async with in_memory(servers) as sidecar:
        owner, other = await sidecar.engine(), await sidecar.engine()
        handle = json.loads(text_of(await owner.call_and_wait("f__records", {"count": 5000})))["handle"]
        foreign = await other.call_and_wait("query_result", {"handle": handle, "query": "length(@)"})
        forged = await other.call_and_wait("query_result", {"handle": "h_forged", "query": "length(@)"})
        assert text_of(foreign).replace(handle, "H") == text_of(forged).replace("h_forged", "H")
        assert text_of(await owner.call_and_wait("query_result", {"handle": handle, "query": "length(@)"})) == "5000"


async def test_large_text_is_cut_and_the_budget_from_the_environment_wins() -> None:
    def big(call: ScriptedCall) -> None:
        call.answer("abcdefghijklmnopqrstuvwxyz012345" * 1600)

    servers = {"f": FakeServer([tool("big")], on_call=big)}
    async with in_memory(servers, env={"OMB_MCP_RESULT_BUDGET": "1000"}) as sidecar:
        engine = await sidecar.engine()
        shown = text_of(await engine.call_and_wait("f__big"))
        assert len(shown) <= 1000 and "characters left out" in shown


async def test_a_result_under_the_budget_passes_byte_for_byte() -> None:
    result = {"content": [{"type": "text", "text": "small"}], "structuredContent": {"k": [1, 2.5, "\u00e9"]},
              "isError": False}
    servers = {"f": FakeServer([tool("echo")], on_call=lambda call: call.answer(result=result))}
    async with in_memory(servers) as sidecar:
        engine = await sidecar.engine()
        assert (await engine.call_and_wait("f__echo"))["result"] == result
