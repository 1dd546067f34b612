"""Policy: per-invocation decisions after the grant, before the call.

Declarative rules from the config come first (first match wins); then the hook, a
`module:function` loaded at start, which gets a read-only view of the call and returns
allow or deny with a reason. A hook that raises, hangs past its deadline, or returns
anything else denies: the stage fails closed. Consequential tools can require a
confirmation; with no approval path (no hook), such a call is refused and says so.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import logging
from collections.abc import Callable
from typing import Any, Literal

import msgspec

from sidecar.config import Policy, PolicyRule
from sidecar.errors import ConfigError
from sidecar.gate.grants import glob_match

__all__ = ["CallView", "Decision", "PolicyEngine", "load_hook"]

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

    @property
    def active(self) -> bool:
        return bool(self.rules) or self.hook is not None or self.require_confirmation

    def rule_for(self, tool: str) -> PolicyRule | None:
        return next((r for r in self.rules if glob_match(r.tool, tool)), None)

    def wants_confirmation(self, view: CallView) -> bool:
        """This call needs a person's confirmation (a `confirm` rule, or a consequential tool
        with `requireConfirmation`), and no rule refuses it outright."""
        rule = self.rule_for(view.tool)
        if rule is not None and rule.action == "deny":
            return False
        return (rule is not None and rule.action == "confirm") or (view.consequential and self.require_confirmation)

    async def decide(self, view: CallView, confirmed: bool = False) -> Decision:
        """`confirmed`: the person already allowed this call (the confirmation stage asked)."""
        rule = self.rule_for(view.tool)
        if rule is not None and rule.action == "deny":
            return Decision("deny", rule.reason or "a policy rule refuses this tool", "rule")
        confirm = not confirmed and (
            (rule is not None and rule.action == "confirm") or (view.consequential and self.require_confirmation))
        if rule is not None and rule.action == "allow" and not confirm:
            return Decision("allow", rule.reason, "rule")
        if self.hook is not None:
            return await self._ask_hook(msgspec.structs.replace(view, confirmation_required=confirm))
        if confirm:
            return Decision("confirm", "this tool needs a confirmation and no approval path is configured", "confirmation")
        return ALLOW

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
