"""`policy.rules` with their argument parts compiled: the first rule that matches a call.

Owns the compile of every rule when the gate is built (a bad condition is a
`ConfigError` at `policy.rules[i]` naming the rule's tool), and the walk over the rules
for one call: the tool pattern, then the `when` condition, then (for a `classify` rule)
the rating of the named argument mapped through `levels`. First match wins.

When a condition cannot be decided it errs on the strict side: past its bound the
call is denied (nothing is let through because it was made expensive to judge); on data
it does not fit (a list where text was expected) a rule that denies or asks for a
confirmation matches, and a rule that allows does not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sidecar.config import PolicyRule
from sidecar.errors import ConfigError
from sidecar.gate.argrules.conditions import Condition, ConditionError, Judging, compile_condition, new_meter
from sidecar.gate.argrules.rating import Rating
from sidecar.gate.argrules.shell_risk import rate_argv
from sidecar.gate.grants import glob_match
from sidecar.gate.budget.query_meter import QueryError

__all__ = ["ArgumentRules", "DEFAULT_LEVELS", "Found", "label_of"]

DEFAULT_LEVELS = {"safe": "allow", "review": "confirm", "high": "deny"}
Found = tuple[int, str, str, str]  # (index, label, action, reason)
_LABEL_CHARS = 60


def label_of(index: int, rule: PolicyRule) -> str:
    """`#<index> <label>`: the rule's own label, else its tool and what it reads."""
    if rule.label:
        return f"#{index} {rule.label[:_LABEL_CHARS]}"
    kind = " classify:shell" if rule.classify is not None else ""
    when = f" when {rule.when}" if rule.when else ""
    text = f"{rule.tool}{kind}{when}"
    return f"#{index} {text if len(text) <= _LABEL_CHARS else text[:_LABEL_CHARS - 1] + '…'}"


class _Compiled:
    def __init__(self, index: int, rule: PolicyRule) -> None:
        self.index, self.rule = index, rule
        self.label = label_of(index, rule)
        self.condition: Condition | None = _compile(index, rule) if rule.when is not None else None
        self.levels: dict[str, str] = dict(DEFAULT_LEVELS)
        self.levels.update({str(level): str(action) for level, action in (rule.levels or {}).items()})
        self.strict = rule.action != "allow" if rule.classify is None else "deny" in self.levels.values()


def _compile(index: int, rule: PolicyRule) -> Condition:
    assert rule.when is not None
    try:
        return compile_condition(rule.when)
    except ValueError as exc:
        raise ConfigError(f"policy.rules[{index}].when", f"the rule for '{rule.tool}': {exc}") from None


class ArgumentRules:
    def __init__(self, rules: Sequence[PolicyRule]) -> None:
        self.rules = [_Compiled(index, rule) for index, rule in enumerate(rules)]

    def first_match(self, tool: str, arguments: dict[str, Any]) -> Found | None:
        meter: Judging | None = None
        for compiled in self.rules:
            rule = compiled.rule
            if not glob_match(rule.tool, tool):
                continue
            unread = ""
            if compiled.condition is not None:
                meter = meter or new_meter()
                try:
                    if not compiled.condition.holds(arguments, meter):
                        continue
                except ConditionError as exc:
                    if exc.over_bound:
                        return (compiled.index, compiled.label, "deny",
                                f"the argument rule could not be checked within its bound ({exc})")
                    if not compiled.strict:
                        continue
                    unread = f"the condition could not be read on these arguments ({exc})"
            if rule.classify is None:
                assert rule.action is not None
                return compiled.index, compiled.label, rule.action, "; ".join(filter(None, (rule.reason, unread)))
            meter = meter or new_meter()
            try:
                rating = _rate(arguments.get(rule.classify.argument), rule.classify.argument, meter)
            except QueryError as exc:  # the call's conditions spent the bound before the command was read
                return compiled.index, compiled.label, "deny", f"the command could not be rated within the bound ({exc})"
            reason = f"the command is rated {rating.level}: {rating.why}"
            return compiled.index, compiled.label, compiled.levels[rating.level], reason
        return None


def _rate(value: Any, argument: str, meter: Judging) -> Rating:
    if isinstance(value, str):
        return meter.rate(value)
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return rate_argv(value)
    if value is None:
        return Rating("review", f"no `{argument}` argument to rate")
    return Rating("review", f"`{argument}` is not text")
