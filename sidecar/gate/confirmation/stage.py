"""Confirmation the gate owns: a consequential call is put to the person, through the
engine's elicitation, before the policy lets it run.

Owns the form (the tool, its server and every argument, rendered by
`sidecar.gate.confirmation.form`; the choices "Allow once" and "Deny"), the reading of the answer
(only an accepted form whose decision is "allow" allows; decline, cancel, an error, no
answer within `policy.confirmSeconds`, anything else denies), and, on the 2026-07-28
revision, the input-required round: the question goes back as the result, with its
pending state sealed (`sidecar.gate.confirmation.sealed`), and the retried call carries the answer.

What may ask is set by the front from the engine's declared capabilities, never from
the call: no argument, `_meta` field or tool name can mark a call confirmed.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

import msgspec

from sidecar.errors import REQUEST_STATE_NOT_VALID
from sidecar.gate.confirmation.form import confirmation_message
from sidecar.redact import Redactor

__all__ = ["Asker", "ConfirmStage", "Confirmation", "Confirmer", "Outcome", "answer_allows", "confirmation_form",
           "input_required"]

log = logging.getLogger(__name__)

Asker = Callable[[dict[str, Any], float], Awaitable[Any]]  # (elicitation params, seconds) -> result or None
Outcome = Literal["allow", "deny", "ask", "refuse"]  # refuse: a request state the gate cannot honour
REQUEST_KEY = "confirm"


class Confirmer:
    """How this call's engine can be asked: live elicitation (`ask`), or the stateless
    round (`stateless`, with what the retried request carried). `caller` is who asks (the
    identity held results are bound to), which a sealed state is bound to as well."""

    def __init__(self, ask: Asker | None = None, *, stateless: bool = False, state: object = None,
                 responses: object = None, caller: str = "", confirmed: bool = False) -> None:
        self.ask = ask
        self.confirmed = confirmed  # a later round of a call the person already allowed (a relayed state's claim)
        self.caller = caller
        self.stateless = stateless
        self.state = state
        self.responses = responses


def confirmation_form(tool: str, upstream: str, arguments: Mapping[str, Any], redact: Redactor,
                      reason: str = "") -> dict[str, Any]:
    """The `elicitation/create` params: a question naming the call (rendered by
    `sidecar.gate.confirmation.form`, where no value can forge a line), and two choices."""
    message = confirmation_message(tool, upstream, arguments, redact, reason)
    schema = {"type": "object", "required": ["decision"], "properties": {"decision": {
        "type": "string", "title": "Decision",
        "oneOf": [{"const": "allow", "title": "Allow once"}, {"const": "deny", "title": "Deny"}]}}}
    return {"message": message, "requestedSchema": schema}


def answer_allows(answer: Any) -> bool:
    """Only an accepted form whose decision is exactly "allow"."""
    if isinstance(answer, (bytes, msgspec.Raw)):
        try:
            answer = msgspec.json.decode(bytes(answer))
        except msgspec.DecodeError:
            return False
    if not isinstance(answer, dict) or answer.get("action") != "accept":
        return False
    content = answer.get("content")
    return isinstance(content, dict) and content.get("decision") == "allow"


def input_required(form: dict[str, Any], state: str) -> bytes:
    """The 2026-07-28 result that asks the engine to put the form to the person and retry."""
    return msgspec.json.encode({
        "resultType": "input_required",
        "inputRequests": {REQUEST_KEY: {"method": "elicitation/create", "params": {"mode": "form", **form}}},
        "requestState": state,
    })


def stateless_answer(responses: object) -> Any:
    return responses.get(REQUEST_KEY) if isinstance(responses, dict) else None


class Confirmation(msgspec.Struct, frozen=True):
    outcome: Outcome
    reason: str
    result: bytes | None = None  # the input-required result, when the person is asked statelessly


class ConfirmStage:
    """Puts consequential calls to the person; one per gate."""

    def __init__(self, policy: Any, bot: str, face: str, redact: Redactor,
                 environ: Mapping[str, str] | None = None, spent: Any = None) -> None:
        self.seconds = policy.confirm_seconds
        self.state_seconds = policy.confirm_state_seconds
        self.key_env = policy.confirm_key_env
        self.bot, self.face = bot, face
        self.redact = redact
        self.environ = environ
        self.spent: Any = spent  # where used state ids go (None: this process; see sidecar.trust.shared)
        self._sealer: Any = None

    def sealer(self) -> Any:
        if self._sealer is None:
            from sidecar.gate.confirmation.sealed import Sealer, key_from
            from sidecar.settings import process_settings

            environ = self.environ if self.environ is not None else process_settings().environ
            self._sealer = Sealer(key_from(environ, self.key_env),
                                  self.spent)
        return self._sealer

    async def settle(self, confirmer: Confirmer, tool: str, upstream: str, arguments: Mapping[str, Any],
                     reason: str = "") -> Confirmation:
        if confirmer.confirmed:
            return Confirmation("allow", "the person allowed this call before its server asked for input")
        form = confirmation_form(tool, upstream, arguments, self.redact, reason)
        if confirmer.stateless:
            return self._stateless(confirmer, tool, arguments, form)
        assert confirmer.ask is not None
        answer = await confirmer.ask(form, self.seconds)
        if answer is None:
            return Confirmation("deny", f"nobody answered the confirmation within {self.seconds:g} s")
        return _by_answer(answer)

    def _stateless(self, confirmer: Confirmer, tool: str, arguments: Mapping[str, Any],
                   form: dict[str, Any]) -> Confirmation:
        sealer = self.sealer()
        if confirmer.state is None:
            claim = sealer.new_claim(bot=self.bot, face=self.face, tool=tool, arguments=arguments,
                                     seconds=self.state_seconds, caller=confirmer.caller)
            return Confirmation("ask", "the person was asked", input_required(form, sealer.seal(claim)))
        from sidecar.gate.budget.store import StoreUnavailable

        try:
            redeemed = sealer.redeem(confirmer.state, bot=self.bot, face=self.face, tool=tool, arguments=arguments,
                                     caller=confirmer.caller)
        except StoreUnavailable:  # fail closed: a state that cannot be marked used is not honoured
            return Confirmation("deny", "the confirmation state could not be checked: the shared store did not answer")
        if not redeemed:  # the request itself is refused, as for every state the sidecar cannot honour
            return Confirmation("refuse", REQUEST_STATE_NOT_VALID)
        return _by_answer(stateless_answer(confirmer.responses))


def _by_answer(answer: Any) -> Confirmation:
    if answer_allows(answer):
        return Confirmation("allow", "the person allowed it once")
    return Confirmation("deny", "the person did not allow this call")
