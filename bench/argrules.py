"""The cost of policy rules that read a call's arguments (issue 27), timed in memory.

Owns one benchmark: microseconds of Python per pass-through call through the whole gate
(a face built by `build_face` over the in-memory echo upstream of `bench.gate`) with
no policy, with one name-only rule, and with ten argument rules none of which matches
until the last (so every condition runs on every call: the worst case for first-match);
and the match alone (`PolicyEngine.match`) for those ten rules and for the shell
classifier on a typical command. The calls carry a path, a URL and a command.

    python -m bench.argrules              # prints the figures as JSON
    python -m bench.argrules --docs DIR   # and writes the docs' table there (bench.doc_files)
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench.gate import _config, _EchoChannel

__all__ = ["TEN_RULES", "render_docs", "time_argument_rules"]

ARGUMENTS: dict[str, Any] = {"path": "/work/src/app.py", "url": "https://api.example.com/v1/items?page=2",
             "command": "git status && ls -la src | head -20", "tags": ["a", "b"]}
TEN_RULES: list[dict[str, Any]] = [
    {"tool": "up__drop_*", "action": "deny"},
    {"tool": "up__*", "when": "starts_with(path, '/etc/')", "action": "deny"},
    {"tool": "up__*", "when": "path_outside(path, ['/work'])", "action": "deny"},
    {"tool": "up__*", "when": "private_host(url)", "action": "deny"},
    {"tool": "up__*", "when": "contains(command, 'sudo')", "action": "deny"},
    {"tool": "up__*", "when": "length(to_string(@)) > `100000`", "action": "deny"},
    {"tool": "up__*", "when": "shell_level(command) == 'high'", "action": "deny"},
    {"tool": "up__*", "when": "contains(tags, 'secret')", "action": "confirm"},
    {"tool": "up__*", "when": "length(tags) > `50`", "action": "deny"},
    {"tool": "up__*", "classify": {"argument": "command", "as": "shell"},
     "levels": {"safe": "allow", "review": "allow", "high": "deny"}},
]
CALLS = 3000


async def _gate_us(policy: dict[str, Any], calls: int) -> float:
    from sidecar.gate import ToolCall
    from sidecar.hub import build_face

    face = build_face(_config({"policy": policy} if policy else {}), _EchoChannel.open)
    running = asyncio.create_task(face.pool.run())
    try:
        await face.pool.wait_first_start("up", 10.0)
        gate = face.gate
        for _ in range(100):
            await gate.run(ToolCall(name="up__echo", arguments=dict(ARGUMENTS)))
        started = time.perf_counter()
        for _ in range(calls):
            call = await gate.run(ToolCall(name="up__echo", arguments=dict(ARGUMENTS)))
        assert call.outcome == "completed" and call.result is not None, call
        return (time.perf_counter() - started) / calls * 1e6
    finally:
        running.cancel()
        await asyncio.wait([running])


def _match_us(rules: list[dict[str, Any]], calls: int) -> float:
    from sidecar.gate.policy import PolicyEngine

    engine = PolicyEngine(_config({"policy": {"rules": rules}}).policy)
    found = engine.match("up__echo", ARGUMENTS)
    assert found is not None and found.position == len(rules) - 1, found
    started = time.perf_counter()
    for _ in range(calls):
        engine.match("up__echo", ARGUMENTS)
    return (time.perf_counter() - started) / calls * 1e6


def _classify_us(command: str, calls: int) -> float:
    from sidecar.gate.argrules.shell_risk import rate_command

    started = time.perf_counter()
    for _ in range(calls):
        rate_command(command)
    return (time.perf_counter() - started) / calls * 1e6


def time_argument_rules(repeats: int = 3, calls: int = CALLS) -> dict[str, float | str]:
    """Medians over `repeats` runs; or {'error': ...} if the gate's API moved."""
    try:
        figures: dict[str, list[float]] = {}
        for _ in range(repeats):
            for label, policy in (("gate_no_policy_us", {}),
                                  ("gate_name_rule_us", {"rules": [{"tool": "up__drop_*", "action": "deny"}]}),
                                  ("gate_ten_argument_rules_us", {"rules": TEN_RULES})):
                figures.setdefault(label, []).append(asyncio.run(_gate_us(policy, calls)))
            figures.setdefault("match_ten_rules_us", []).append(_match_us(TEN_RULES, calls))
            figures.setdefault("classify_command_us", []).append(_classify_us(ARGUMENTS["command"], calls))
        result: dict[str, float | str] = {k: round(statistics.median(v), 1) for k, v in figures.items()}
        result["ten_rules_added_us"] = round(float(result["gate_ten_argument_rules_us"])
                                             - float(result["gate_no_policy_us"]), 1)
        return result
    except Exception as exc:  # the report names the failure; the run goes on
        return {"error": f"{type(exc).__name__}: {exc}"}


ROWS = (("gate, no policy", "gate_no_policy_us"), ("gate, one name-only rule", "gate_name_rule_us"),
        ("gate, ten argument rules", "gate_ten_argument_rules_us"),
        ("the ten rules' match alone", "match_ten_rules_us"),
        ("the shell classifier on `git status && ls -la src \\| head -20`", "classify_command_us"))


def render_docs(figures: dict[str, Any]) -> dict[str, str]:
    """The table of docs/gate.md, "What argument rules cost"."""
    from bench import doc_files

    result = figures["result"]
    if "error" in result:
        lines = [f"Not measured: {result['error']}"]
    else:
        lines = doc_files.table(["figure", f"µs per call (median of {figures['repeats']} runs)"],
                                [[label, f"{result[key]:.1f}"] for label, key in ROWS])
    return {"argrules.md": doc_files.page("bench.argrules", lines, figures["measured"])}


def main(argv: list[str]) -> int:
    repeats = 3
    result = time_argument_rules(repeats)
    print(json.dumps(result, indent=2))
    if "--docs" in argv:
        from bench import doc_files

        figures = {"measured": doc_files.stamp("python -m bench.argrules " + " ".join(argv)), "repeats": repeats,
                   "result": result}
        for path in doc_files.write("argrules", "bench.argrules", figures, Path(argv[argv.index("--docs") + 1])):
            print(f"docs: {path}")
    return 0 if "error" not in result else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
