"""The stages that may refuse a resolved call: the bot's grant, then the policy.

`CheckGrant` reads `call.target`; a tool the bot may not use fails as an unknown tool
(the same words as a name that does not exist). `CheckPolicy` reads the target and the
arguments (a copy: no rule can change what is sent), records its decision, and ends
the call with a tool error on `deny` or `confirm`; with a way to ask the person
(`call.confirmer`), a call that needs a confirmation is put to them first (the
confirmation stage, `sidecar.gate.confirmation.stage`), and on the 2026-07-28 revision the
question itself completes the call. Both pass on everything they have no rule for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from sidecar.config import SidecarConfig
from sidecar.errors import INVALID_PARAMS, EngineInputError
from sidecar.gate.call import ToolCall
from sidecar.gate.grants import Grant
from sidecar.gate.policy import CallView, Decision, PolicyEngine, RuleMatch
from sidecar.gate.route import tool_error, unknown_tool
from sidecar.gate.stages.base import Current, Next
from sidecar.redact import Redactor

__all__ = ["CheckGrant", "CheckPolicy"]


class CheckGrant:
    def __init__(self, grant: Grant) -> None:
        self.grant = grant

    async def __call__(self, call: ToolCall, call_next: Next) -> ToolCall:
        target = call.target
        if target is not None and not self.grant.allows(target.alias, target.name):
            call.decide("grant", "deny")
            return call.fail(unknown_tool(call.asked_for))
        return await call_next(call)


class CheckPolicy:
    def __init__(self, policy: PolicyEngine, config: SidecarConfig, current: Current, redact: Redactor,
                 spent: Any = None, environ: Mapping[str, str] | None = None) -> None:
        self.policy = policy
        self.config = config
        self.current = current  # the servers' consequential lists, read per call from the snapshot
        self.redact = redact
        self.spent, self.environ = spent, environ  # for the confirmation stage, when it is made
        self.confirm: Any = None  # the confirmation stage, made on the first call that needs it

    def confirm_stage(self) -> Any:
        """The confirmation stage, made once (its module loads only now)."""
        if self.confirm is None:
            from sidecar.gate.confirmation.stage import ConfirmStage

            self.confirm = ConfirmStage(self.config.policy, self.config.bot.id, self.config.face.name, self.redact,
                                        self.environ, self.spent)
        return self.confirm

    async def __call__(self, call: ToolCall, call_next: Next) -> ToolCall:
        target = call.target
        if target is None or not self.policy.active:
            return await call_next(call)
        bot = self.config.bot
        view = CallView(
            tool=call.ran, upstream=target.alias, arguments=_copy(call.arguments), bot=bot.id,
            engine=bot.engine, consequential=self._consequential(call), confirmation_required=False,
        )
        match = self.policy.match(call.ran, call.arguments)  # the very arguments the upstream gets
        call.rule = match.label if match is not None else ""
        decision = await self._decide(call, view, match)
        if decision is None:  # the person is being asked (2026-07-28): the question is the result
            return call
        call.decide("policy", decision.action, decision.reason)
        if decision.action == "allow":
            return await call_next(call)
        if decision.action == "confirm":
            return call.complete(tool_error(f"Confirmation required: {decision.reason}. The call was not run."))
        return call.complete(tool_error(f"The sidecar's policy refused this call: {decision.reason or 'denied'}"))

    async def _decide(self, call: ToolCall, view: CallView, match: RuleMatch | None) -> Decision | None:
        """The policy's decision; a call that needs a confirmation is first put to the
        person when the engine can ask."""
        if call.confirmer is None or not self.policy.wants_confirmation(view, match):
            return await self.policy.decide(view, match=match)
        settled = await self.confirm_stage().settle(call.confirmer, call.ran, view.upstream, call.arguments,
                                            match.reason if match is not None else "")
        call.decide("confirm", settled.outcome, settled.reason)
        if settled.outcome == "ask":
            assert settled.result is not None
            call.complete(msgspec.Raw(settled.result))
            return None
        if settled.outcome == "refuse":  # invalid params, as every state the sidecar cannot honour
            call.fail(EngineInputError(settled.reason, code=INVALID_PARAMS))
            return None
        if settled.outcome == "deny":
            return Decision("deny", settled.reason, "confirmation")
        return await self.policy.decide(view, confirmed=True, match=match)

    def _consequential(self, call: ToolCall) -> bool:
        assert call.target is not None
        server = self.current.facts.servers.get(call.target.alias)
        if server is None:
            return False
        if call.target.name in server.consequential:
            return True
        hints = call.target.spec.get("annotations")
        return server.trust_destructive_hint and isinstance(hints, dict) and hints.get("destructiveHint") is True


def _copy(arguments: dict[str, Any]) -> dict[str, Any]:
    copied: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(arguments))
    return copied
