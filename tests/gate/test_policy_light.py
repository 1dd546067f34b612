"""A config without argument rules pays nothing for them: a whole call through the gate,
with name-only policy rules, never imports `sidecar.gate.argrules` (nor jmespath); one
`when` rule loads it, at start, before any call."""

from __future__ import annotations

import subprocess
import sys

from tests.test_imports import REPO

_PROGRAM = """
import asyncio, sys, json
from tests.harness import FakeServer, in_memory, text_of, tool

async def main(rules):
    async with in_memory({"f": FakeServer([tool("echo")])}, policy={"rules": rules}) as sidecar:
        loaded_at_start = "sidecar.gate.argrules" in sys.modules
        engine = await sidecar.engine()
        ident = engine.call("f__echo", {"command": "ls"})
        call = await sidecar.upstream("f").expect_call("echo")
        call.answer("ok")
        assert text_of(await engine.answer_to(ident)) == "ok"
    loaded = sorted(m for m in sys.modules if m.startswith("sidecar.gate.argrules") or m.startswith("jmespath"))
    print(json.dumps([loaded_at_start, loaded]))

asyncio.run(main(json.loads(sys.argv[1])))
"""


def _modules_after_a_call(rules: str) -> list[object]:
    out = subprocess.run([sys.executable, "-c", _PROGRAM, rules], capture_output=True, text=True, check=True,
                         cwd=REPO, timeout=60).stdout
    import json

    loaded: list[object] = json.loads(out.splitlines()[-1])
    return loaded


def test_name_only_rules_never_import_the_argument_rules() -> None:
    assert _modules_after_a_call('[{"tool": "f__*", "action": "allow"}, {"tool": "x__y", "action": "deny"}]') == [
        False, []]


def test_one_argument_rule_loads_them_when_the_gate_is_built() -> None:
    loaded_at_start, loaded = _modules_after_a_call('[{"tool": "f__*", "when": "command == \'ls\'", "action": "allow"}]')
    assert loaded_at_start is True
    assert "sidecar.gate.argrules.rules" in loaded and "jmespath" in loaded  # type: ignore[operator]
