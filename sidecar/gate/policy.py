"""Policy: per-invocation decisions after the grant, before the call.

Declarative rules from the config come first (first match wins); then the hook, a
`module:function` loaded at start, which gets a read-only view of the call and returns
allow or deny with a reason. A hook that raises, hangs past its deadline, or returns
anything else denies: the stage fails closed. Consequential tools can require a
confirmation; with no approval path (no hook), such a call is refused and says so.

A rule may read the call's arguments (`when`, `classify`: issue 27); those rules are
compiled here when the gate is built, by `sidecar.gate.argrules`, which is imported only
when the config has one. The rule that decided is named in the decision (`#index label`).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import logging
from collections.abc import Callable
from types import EllipsisType
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import msgspec

from sidecar.config import Policy, PolicyRule
from sidecar.errors import ConfigError
from sidecar.gate.grants import glob_match

if TYPE_CHECKING:
    from sidecar.gate.argrules.rules import ArgumentRules

__all__ = ["CallView", "Decision", "PolicyEngine", "RuleMatch", "load_hook"]

log = logging.getLogger(__name__)


class CallView(msgspec.Struct, frozen=True):
    """What a hook sees of a call: a copy, so nothing it does changes the call."""

    tool: str  # alias__tool, the tool that will really run
    upstream: str
    arguments: dict[str, Any]
    bot: str
    engine: str
    consequential: bool
    confirmation_required: bool


class Decision(msgspec.Struct, frozen=True):
    action: Literal["allow", "deny", "confirm"]
    reason: str = ""
    by: str = "policy"  # "rule", "hook", "confirmation"
    rule: str = ""  # the rule that decided: `#index label`


class RuleMatch(NamedTuple):
    """The first rule that matches a call: its place, label, action and reason."""

    position: int  # in `policy.rules`
    label: str
    action: str
    reason: str


ALLOW = Decision("allow", by="none")
Hook = Callable[[CallView], Any]


def load_hook(spec: str) -> Hook:
    """Import `module:function` at start; a bad spec is a config error."""
    module_name, _, function_name = spec.partition(":")
    if not module_name or not function_name:
        raise ConfigError("policy.hook", "must be 'module:function'")
    try:
        function = getattr(importlib.import_module(module_name), function_name)
    except (ImportError, AttributeError) as exc:
        raise ConfigError("policy.hook", f"cannot load {spec!r} ({type(exc).__name__})") from None
    if not callable(function):
        raise ConfigError("policy.hook", f"{spec!r} is not callable")
    return function  # type: ignore[no-any-return]


def _as_decision(answer: Any) -> Decision | None:
    if isinstance(answer, dict):
        action, reason = answer.get("action"), answer.get("reason", "")
    else:
        action, reason = getattr(answer, "action", None), getattr(answer, "reason", "")
    if action not in ("allow", "deny") or not isinstance(reason, str):
        return None
    return Decision(action, reason, "hook")


class PolicyEngine:
    def __init__(self, policy: Policy, hook: Hook | None = None) -> None:
        self.rules: tuple[PolicyRule, ...] = tuple(policy.rules)
        self.require_confirmation = policy.require_confirmation
        self.timeout = policy.hook_timeout_seconds
        self.hook = hook if hook is not None else (load_hook(policy.hook) if policy.hook else None)
        self.argument_rules: ArgumentRules | None = None
        if any(rule.reads_arguments for rule in self.rules):  # else the room is never imported
            from sidecar.gate.argrules.rules import ArgumentRules

            self.argument_rules = ArgumentRules(self.rules)

    @property
    def active(self) -> bool:
        return bool(self.rules) or self.hook is not None or self.require_confirmation

    def match(self, tool: str, arguments: dict[str, Any]) -> RuleMatch | None:
        """The first rule for this call: by the tool's name, and by its arguments when a
        rule reads them (`arguments` are the ones the upstream will receive)."""
        if self.argument_rules is not None:
            found = self.argument_rules.first_match(tool, arguments)
            return RuleMatch(*found) if found is not None else None
        for index, rule in enumerate(self.rules):
            if glob_match(rule.tool, tool):
                assert rule.action is not None  # a rule without one reads arguments
                return RuleMatch(index, f"#{index} {rule.label or rule.tool}", rule.action, rule.reason)
        return None

    def rule_for(self, tool: str) -> PolicyRule | None:
        """The first rule naming `tool`, by its pattern alone."""
        return next((r for r in self.rules if glob_match(r.tool, tool)), None)

    def wants_confirmation(self, view: CallView, match: RuleMatch | None | EllipsisType = ...) -> bool:
        """This call needs a person's confirmation (a `confirm` rule, or a consequential tool
        with `requireConfirmation`), and no rule refuses it outright."""
        if isinstance(match, EllipsisType):
            match = self.match(view.tool, view.arguments)
        if match is not None and match.action == "deny":
            return False
        return (match is not None and match.action == "confirm") or (view.consequential and self.require_confirmation)

    async def decide(self, view: CallView, confirmed: bool = False,
                     match: RuleMatch | None | EllipsisType = ...) -> Decision:
        """`confirmed`: the person already allowed this call (the confirmation stage asked).
        `match`: the rule `match` found for this call (the stage asks once); found here
        when not given."""
        if isinstance(match, EllipsisType):
            match = self.match(view.tool, view.arguments)
        rule = match.label if match is not None else ""
        if match is not None and match.action == "deny":
            return Decision("deny", match.reason or "a policy rule refuses this call", "rule", rule)
        confirm = not confirmed and (
            (match is not None and match.action == "confirm") or (view.consequential and self.require_confirmation))
        if match is not None and match.action == "allow" and not confirm:
            return Decision("allow", match.reason, "rule", rule)
        if self.hook is not None:
            decision = await self._ask_hook(msgspec.structs.replace(view, confirmation_required=confirm))
            return msgspec.structs.replace(decision, rule=rule)
        if confirm:
            return Decision("confirm", "this tool needs a confirmation and no approval path is configured",
                            "confirmation", rule)
        return msgspec.structs.replace(ALLOW, rule=rule) if rule else ALLOW

    async def _ask_hook(self, view: CallView) -> Decision:
        assert self.hook is not None
        hook = self.hook
        try:
            async with asyncio.timeout(self.timeout):
                if inspect.iscoroutinefunction(hook):
                    answer = await hook(view)
                else:
                    answer = await asyncio.to_thread(hook, view)
        except TimeoutError:
            return Decision("deny", f"the policy hook did not answer within {self.timeout:g}s", "hook")
        except Exception as exc:  # fail closed, naming only the kind of error
            log.warning("policy hook raised %s: the call is denied", type(exc).__name__)
            return Decision("deny", f"the policy hook failed ({type(exc).__name__})", "hook")
        decision = _as_decision(answer)
        if decision is None:
            return Decision("deny", "the policy hook returned no valid decision", "hook")
        return decision
