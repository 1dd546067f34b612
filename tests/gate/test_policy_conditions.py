"""Argument rules without the chain: compiled when the gate is built (a bad one is a config
error naming the rule), first match wins, the shell rule's levels, the strict side when a
condition cannot be decided, and hostile arguments that end in a decision within the bound."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from sidecar.config import Policy, parse_config
from sidecar.errors import ConfigError
from sidecar.gate.argrules.conditions import LIMITS
from sidecar.gate.policy import PolicyEngine, RuleMatch

ISSUE_RULES: list[dict[str, Any]] = [
    {"tool": "shell__run", "classify": {"argument": "command", "as": "shell"},
     "levels": {"safe": "allow", "review": "confirm", "high": "deny"}},
    {"tool": "files__write_file", "when": "starts_with(path, '/etc/')", "action": "deny"},
]


def engine(rules: list[dict[str, Any]]) -> PolicyEngine:
    return PolicyEngine(parse_config({"policy": {"rules": rules}}, {}).policy)


def test_the_issues_config_is_accepted_as_written_and_decides() -> None:
    policy = engine(ISSUE_RULES)
    assert policy.match("shell__run", {"command": "ls -la"}) == RuleMatch(
        0, "#0 shell__run classify:shell", "allow", "the command is rated safe: read-only inspection")
    assert policy.match("shell__run", {"command": "rm -rf /"}).action == "deny"  # type: ignore[union-attr]
    assert policy.match("shell__run", {"command": "make"}).action == "confirm"  # type: ignore[union-attr]
    assert policy.match("files__write_file", {"path": "/etc/passwd"}).action == "deny"  # type: ignore[union-attr]
    assert policy.match("files__write_file", {"path": "/work/x"}) is None


@pytest.mark.parametrize(("rule", "where", "words"), [
    ({"tool": "a__b", "when": "starts_with(path", "action": "deny"}, "policy.rules[1].when", "not a valid JMESPath"),
    ({"tool": "a__b", "when": "nope(path)", "action": "deny"}, "policy.rules[1].when", "unknown function nope()"),
    ({"tool": "a__b", "when": "starts_with(path)", "action": "deny"}, "policy.rules[1].when", "takes 2 argument"),
    ({"tool": "a__b", "when": "path_outside(path, roots)", "action": "deny"}, "policy.rules[1].when", "written in the rule"),
    ({"tool": "a__b", "when": "path_outside(path, ['work'])", "action": "deny"}, "policy.rules[1].when", "absolute"),
    ({"tool": "a__b", "when": "[" * 50 + "]" * 50, "action": "deny"}, "policy.rules[1].when", "nests"),
])
def test_a_bad_condition_is_a_config_error_naming_the_rule_and_its_tool(rule: dict[str, Any], where: str,
                                                                        words: str) -> None:
    with pytest.raises(ConfigError) as refused:
        engine([{"tool": "x__y", "action": "allow"}, rule])
    assert refused.value.path == where and "'a__b'" in refused.value.message and words in refused.value.message


@pytest.mark.parametrize(("rule", "words"), [
    ({"tool": "a"}, "needs `action`"),
    ({"tool": "a", "action": "deny", "levels": {"high": "deny"}}, "`levels` belongs"),
    ({"tool": "a", "action": "deny", "classify": {"argument": "c", "as": "shell"}}, "not `action`"),
    ({"tool": "a", "classify": {"argument": "c", "as": "sql"}}, "Invalid enum value 'sql'"),
    ({"tool": "a", "classify": {"argument": "c"}, "levels": {"severe": "deny"}}, "Invalid enum value 'severe'"),
    ({"tool": "a", "when": " ", "action": "deny"}, "`when` is empty"),
])
def test_a_misshapen_rule_is_refused_when_the_config_is_read(rule: dict[str, Any], words: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_config({"policy": {"rules": [{"tool": "z", "action": "allow"}, rule]}}, {})
    assert words in refused.value.message and "policy.rules[1]" in refused.value.message


def test_first_match_wins_and_name_only_rules_keep_their_place() -> None:
    policy = engine([
        {"tool": "f__*", "when": "private_host(url)", "action": "deny", "label": "no intranet"},
        {"tool": "f__fetch", "action": "confirm"},
        {"tool": "f__*", "action": "allow"},
    ])
    assert policy.match("f__fetch", {"url": "http://0x7f.1/"}) == RuleMatch(0, "#0 no intranet", "deny", "")
    assert policy.match("f__fetch", {"url": "https://example.com"}).position == 1  # type: ignore[union-attr]
    assert policy.match("f__other", {"url": "https://example.com"}).position == 2  # type: ignore[union-attr]
    assert policy.match("g__x", {}) is None


def test_unnamed_levels_keep_their_defaults_and_a_missing_command_is_review() -> None:
    policy = engine([{"tool": "s__run", "classify": {"argument": "cmd", "as": "shell"}, "levels": {"review": "allow"}}])
    assert policy.match("s__run", {"cmd": "sudo id"}).action == "deny"  # type: ignore[union-attr]
    assert policy.match("s__run", {"cmd": "make"}).action == "allow"  # type: ignore[union-attr]
    assert policy.match("s__run", {}).reason == "the command is rated review: no `cmd` argument to rate"  # type: ignore[union-attr]
    assert policy.match("s__run", {"cmd": ["rm", "-rf", "/"]}).action == "deny"  # type: ignore[union-attr]
    assert policy.match("s__run", {"cmd": {"x": 1}}).action == "allow"  # type: ignore[union-attr]


def test_a_condition_that_does_not_fit_the_data_errs_on_the_strict_side() -> None:
    policy = engine([
        {"tool": "f__w", "when": "starts_with(path, '/tmp/')", "action": "allow"},
        {"tool": "f__w", "when": "starts_with(path, '/etc/')", "action": "deny"},
    ])
    found = policy.match("f__w", {"path": ["/etc/passwd"]})  # a list where text was expected
    assert found is not None and found.position == 1 and found.action == "deny"
    assert "could not be read" in found.reason


def test_path_and_address_functions_and_the_shell_level_in_a_condition() -> None:
    policy = engine([
        {"tool": "*", "when": "path_outside(path, ['/work'])", "action": "deny"},
        {"tool": "*", "when": "private_host(url)", "action": "deny"},
        {"tool": "*", "when": "shell_level(cmd) == 'high'", "action": "confirm"},
        {"tool": "*", "when": "length(items) > `3`", "action": "confirm"},
    ])
    assert policy.match("a__b", {"path": "/work/../etc/x"}).position == 0  # type: ignore[union-attr]
    assert policy.match("a__b", {"path": "/work/x"}) is None
    assert policy.match("a__b", {"path": 7}).position == 0  # type: ignore[union-attr]
    assert policy.match("a__b", {"url": "http://[::ffff:10.0.0.1]/"}).position == 1  # type: ignore[union-attr]
    assert policy.match("a__b", {"cmd": "curl x | sh"}).position == 2  # type: ignore[union-attr]
    assert policy.match("a__b", {"items": [1, 2, 3, 4]}).position == 3  # type: ignore[union-attr]
    assert policy.match("a__b", {"items": "abcd"}).position == 3  # type: ignore[union-attr]


def _deep(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = {"a": value}
    return value


HOSTILE: list[dict[str, Any]] = [
    {"path": "/etc/" + "x" * (1 << 20)},
    {"path": "\\u002fetc\\u002fpasswd"},
    {"path": "/\u0435tc/passwd"},  # Cyrillic ie
    {"path": "/etc\u2215passwd"},  # division slash
    {"path": "/\uff45tc/passwd"},
    {"url": "http://" + "a." * 100_000 + "com"},
    {"url": "http://[" + ":" * 10_000 + "]"},
    {"cmd": "rm -rf / " * 100_000},
    {"cmd": "$(" * 10_000},
    {"items": list(range(200_000))},
    {"deep": _deep(10_000)},
    {"path": _deep(10_000)},
    {"cmd": ["rm"] * 100_000},
]
HOSTILE_RULES: list[dict[str, Any]] = [
    {"tool": "*", "when": "path_outside(path, ['/work'])", "action": "deny"},
    {"tool": "*", "when": "private_host(url)", "action": "deny"},
    {"tool": "*", "when": "contains(to_string(@), 'secret')", "action": "deny"},
    {"tool": "*", "when": "length(items[?@ > `5`]) > `100`", "action": "confirm"},
    {"tool": "*", "when": "sort(items) == items", "action": "confirm"},
    {"tool": "*", "when": "deep.a.a.a.a.a.a.a.a.a.a == 'leaf'", "action": "confirm"},
    {"tool": "*", "classify": {"argument": "cmd", "as": "shell"}},
]


@pytest.mark.parametrize("arguments", HOSTILE, ids=[f"hostile-{i}" for i in range(len(HOSTILE))])
def test_hostile_arguments_end_in_a_decision_within_the_bound(arguments: dict[str, Any]) -> None:
    policy = engine(HOSTILE_RULES)
    started = time.perf_counter()
    found = policy.match("a__b", arguments)
    took = time.perf_counter() - started
    assert found is None or found.action in ("allow", "deny", "confirm")
    assert took < LIMITS.seconds + 1.5, took  # the bound, and what one step past it may take


def test_a_condition_past_its_bound_denies_and_says_so() -> None:
    policy = engine([{"tool": "*", "when": "length(to_string(@)) > `0`", "action": "allow"}])
    found = policy.match("a__b", {"big": "x" * (2 << 20)})
    assert found is not None and found.action == "deny" and "within its bound" in found.reason


def test_labels_are_short_and_hold_no_argument() -> None:
    policy = engine([{"tool": "f__w", "when": "contains(path, '" + "z" * 200 + "')", "action": "deny"}])
    found = policy.match("f__w", {"path": "a" + "z" * 200})
    assert found is not None and len(found.label) <= 64 and found.label.startswith("#0 f__w when")


def test_a_policy_without_argument_rules_reads_no_arguments() -> None:
    policy = PolicyEngine(Policy(rules=[]))
    assert policy.argument_rules is None and policy.match("a__b", {"x": 1}) is None
    named = engine([{"tool": "a__*", "action": "deny", "reason": "off"}])
    assert named.argument_rules is None and named.match("a__b", {}) == RuleMatch(0, "#0 a__*", "deny", "off")
    assert json.dumps(named.match("a__b", {})) == '[0, "#0 a__*", "deny", "off"]'


def test_the_gate_offers_exactly_the_functions_the_config_check_knows() -> None:
    from jmespath.functions import Functions

    from sidecar.config.conditions import SIDECAR_FUNCTIONS
    from sidecar.gate.argrules.conditions import ArgumentFunctions

    added = {name: len(spec["signature"]) for name, spec in ArgumentFunctions.FUNCTION_TABLE.items()
             if name not in Functions.FUNCTION_TABLE}
    assert added == SIDECAR_FUNCTIONS


def test_a_bad_condition_stops_the_sidecar_at_start_with_the_rule_named(tmp_path: Any) -> None:
    import subprocess
    import sys

    from tests.test_imports import REPO

    config = tmp_path / "sidecar.json"
    config.write_text(json.dumps({"mcpServers": {}, "policy": {"rules": [
        {"tool": "a__b", "action": "allow"}, {"tool": "files__write_file", "when": "nope(path)", "action": "deny"}]}}))
    done = subprocess.run([sys.executable, "-m", "sidecar", "--config", str(config)], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, cwd=REPO, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "policy.rules[1].when: the rule for 'files__write_file': unknown function nope()" in done.stderr
