"""A condition sees exactly the arguments the upstream receives, on every path a call
takes: a direct call, `use_tool` (arguments as an object or as JSON text), an upstream's
own trio (`<alias>__call_tool`) and the shared trio (`mcp_call_tool`). For generated
arguments X, a rule denies exactly `@ == X`: a call with X is refused (and never reaches
the upstream), a call with X plus one key passes and the upstream receives it whole.
The call's record names the rule; the audit line carries it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sidecar.gate import ToolCall
from tests.harness import FakeServer, in_memory, text_of, tool

# Text without backticks: the literal is written inside a JMESPath `...` literal.
_TEXT = st.text(alphabet=st.characters(blacklist_characters="`", blacklist_categories=("Cs",)), max_size=12)
_SCALARS = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False,
                                                                                allow_infinity=False) | _TEXT
JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
                    max_leaves=12)
ARGUMENTS = st.dictionaries(_TEXT, JSON, max_size=5)

# path -> (the upstream, the tool the engine calls, how the real tool's arguments are wrapped)
PATHS = {
    "direct": ("f", "f__echo", lambda a: a),
    "use_tool": ("agents", "use_tool", lambda a: {"name": "agents__echo", "arguments": a}),
    "use_tool_text": ("agents", "use_tool", lambda a: {"name": "agents__echo", "arguments": json.dumps(a)}),
    "own_trio": ("big", "big__call_tool", lambda a: {"name": "big__echo", "arguments": a}),
    "shared_trio": ("g", "mcp_call_tool", lambda a: {"name": "g__echo", "arguments": a}),
}


def _servers() -> dict[str, FakeServer]:
    big = [tool("echo")] + [tool(f"filler{i}") for i in range(45)]
    return {"agents": FakeServer([tool("echo")]), "big": FakeServer(big), "f": FakeServer([tool("echo")]),
            "g": FakeServer([tool("echo"), tool("a"), tool("b")])}


def _literal(value: Any) -> str:
    return "`" + json.dumps(value) + "`"


async def _run_path(path: str, arguments: dict[str, Any], audit: Path) -> list[ToolCall]:
    alias, called, wrap = PATHS[path]
    rules = [{"tool": "*", "when": f"@ == {_literal(arguments)}", "action": "deny", "label": "exact"},
             {"tool": "*", "when": "private_host(url)", "action": "deny"}]
    top: dict[str, Any] = {"bot": {"engine": "api"}, "features": {"agentsToolBridge": True},
                           "policy": {"rules": rules}, "audit": {"file": str(audit)}}
    if path == "shared_trio":
        top["budgets"] = {"toolCap": 9}
    seen: list[ToolCall] = []
    async with in_memory(_servers(), entries={"agents": {"builtin": True}}, **top) as sidecar:
        sidecar.face.gate.observe(seen.append)
        engine = await sidecar.engine()
        refused = await engine.call_and_wait(called, wrap(arguments))
        assert refused["result"]["isError"] and "policy refused" in text_of(refused), refused
        passing = {**arguments, "pass \u2713": True}
        ident = engine.call(called, wrap(passing))
        received = await sidecar.upstream(alias).expect_call("echo")
        assert received.arguments == passing  # whole, and the refused call never came
        received.answer("ok")
        assert text_of(await engine.answer_to(ident)) == "ok"
    return seen


@pytest.mark.parametrize("path", list(PATHS))
def test_a_condition_sees_exactly_what_the_upstream_receives(path: str, tmp_path: Path) -> None:
    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                     HealthCheck.too_slow])
    @given(ARGUMENTS)
    def check(arguments: dict[str, Any]) -> None:
        audit = tmp_path / "audit.jsonl"
        audit.unlink(missing_ok=True)
        seen = asyncio.run(_run_path(path, arguments, audit))
        denied, passed = seen[0], seen[1]
        assert denied.rule == "#0 exact" and ("policy", "deny", "a policy rule refuses this call") in denied.decisions
        assert passed.rule == "" and passed.outcome == "completed"
        lines = [json.loads(line) for line in audit.read_text().splitlines()]
        assert [line["rule"] for line in lines] == ["#0 exact", None]
        assert all(json.dumps(arguments)[1:-1] not in json.dumps(line) for line in lines if len(arguments) > 1)

    check()


async def test_an_address_rule_refuses_the_metadata_address_through_every_meta_tool() -> None:
    rules = [{"tool": "*", "when": "private_host(url)", "action": "deny", "reason": "no private addresses"}]
    async with in_memory(_servers(), entries={"agents": {"builtin": True}}, bot={"engine": "api"},
                         features={"agentsToolBridge": True}, policy={"rules": rules}) as sidecar:
        engine = await sidecar.engine()
        for path in ("direct", "use_tool", "use_tool_text", "own_trio"):
            _, called, wrap = PATHS[path]
            answer = await engine.call_and_wait(called, wrap({"url": "http://[::ffff:a9fe:a9fe]/latest"}))
            assert "no private addresses" in text_of(answer), (path, answer)


def _frame(ident: str, arguments: str) -> bytes:
    return ('{"jsonrpc":"2.0","id":"%s","method":"tools/call","params":{"name":"f__echo","arguments":%s}}'
            % (ident, arguments)).encode()


async def test_hostile_frames_end_with_a_decision_never_a_crash() -> None:
    """Escapes are decoded before a rule reads them (as the upstream will read them),
    look-alikes are other paths, a 1 MB value and 500-deep nesting are judged within the
    bound, and nesting past the front's limit is refused before any rule runs."""
    rules = [{"tool": "f__echo", "when": "starts_with(path, '/etc/')", "action": "deny", "reason": "etc"},
             {"tool": "f__echo", "when": "path_outside(path, ['/work'])", "action": "deny", "reason": "outside"},
             {"tool": "f__echo", "when": "deep.a.a.a == 'x'", "action": "deny", "reason": "deep"},
             {"tool": "f__echo", "classify": {"argument": "command", "as": "shell"}, "levels": {"review": "deny"}}]
    deep = '{"a":' * 500 + '"leaf"' + "}" * 500
    cases = [
        ('{"path": "\\u002fetc\\u002fpasswd"}', "etc"),
        ('{"path": "/\\u0435tc/passwd"}', "outside"),  # a Cyrillic ie: another path, outside the root
        ('{"path": "/work/../etc/shadow"}', "outside"),  # the text does not start with /etc/; its place is outside
        ('{"path": "/work/%s"}' % ("x" * (1 << 20)), "outside"),
        ('{"path": "/work/a", "command": "ls", "deep": %s}' % deep, "rated safe"),
        ('{"path": "/work/a", "command": "\\u0072m -rf /"}', "rated high"),
        ('{"path": "/work/a", "command": "%s"}' % ("ls " * 400_000), "rated review"),
        ('{"deep": %s}' % ('{"a":' * 10_000 + "1" + "}" * 10_000), "nested deeper"),
    ]
    async with in_memory({"f": FakeServer([tool("echo")])}, policy={"rules": rules}) as sidecar:
        engine = await sidecar.engine()
        for n, (arguments, words) in enumerate(cases):
            engine.send(_frame(f"h{n}", arguments))
            if words == "rated safe":  # no rule refuses it: the upstream gets it
                (await sidecar.upstream("f").expect_call("echo")).answer("ran")
            answer = await engine.answer_to(f"h{n}")
            said = json.dumps(answer)
            assert words in said or (words == "rated safe" and "ran" in said), (n, said[:300])


async def test_a_review_command_is_put_to_the_person_with_the_rating_and_runs_on_allow() -> None:
    """The issue's shell rule with its default `review: confirm`: an engine that can ask
    the person asks (the question says why), "allow" runs it; safe runs unasked; high is
    refused unasked."""
    rules = [{"tool": "f__echo", "classify": {"argument": "command", "as": "shell"},
              "levels": {"safe": "allow", "review": "confirm", "high": "deny"}}]
    async with in_memory({"f": FakeServer([tool("echo")])}, policy={"rules": rules, "confirmSeconds": 5}) as sidecar:
        engine = await sidecar.engine(capabilities={"elicitation": {}})
        ident = engine.call("f__echo", {"command": "make install"})
        asked = await engine.expect_request("elicitation/create")
        assert "rated review" in asked["params"]["message"]
        engine.respond(asked["id"], {"action": "accept", "content": {"decision": "allow"}})
        (await sidecar.upstream("f").expect_call("echo")).answer("built")
        assert text_of(await engine.answer_to(ident)) == "built"
        ident = engine.call("f__echo", {"command": "git status"})
        (await sidecar.upstream("f").expect_call("echo")).answer("clean")
        assert text_of(await engine.answer_to(ident)) == "clean"
        refused = await engine.call_and_wait("f__echo", {"command": "git push --force"})
        assert "rated high: git push --force" in text_of(refused)
        questions = [f for f in engine.frames if f.get("method") == "elicitation/create"]
        assert len(questions) == 1 and len(sidecar.upstream("f").frames("tools/call")) == 2
