"""A 2026-07-28 server's input-required result relayed to a 2026-07-28 engine: both sides
speak the stateless rounds, so the sidecar does not answer the server's questions itself
nor hold the call; it passes the questions on under the server's own keys and carries
the server's state inside one of its own.

Owns the relayed state: sealed with the key and spent-set of the gate's confirmation
states (`sidecar.gate.confirmation.sealed`), under a purpose of its own, marked by `PREFIX` so a
round can tell it from a held question's or a confirmation's before opening it; bound
to the bot, face, caller, the request's method and name and its arguments; expiring
after the policy's `confirmStateSeconds`; accepted once; holding the server's state
(`inner`) and whether the person allowed the call before the server asked
(`confirmed`, so the later round is not put to the person again). A relayed state that
does not open is refused with invalid params, as the server itself refuses an altered
state. Owns the capabilities sent on to the server too: those the engine declared, of
the ones a server may ask about, so the server asks only what the engine can answer;
a server that asks for more anyway ends the call with the missing capability named.
"""

from __future__ import annotations

from typing import Any

import msgspec

from sidecar.errors import REQUEST_STATE_NOT_VALID, EngineInputError
from sidecar.gate.asked import InputRefused
from sidecar.gate.confirmation.sealed import StateClaim
from sidecar.hub.face import Face
from sidecar.hub.session import EngineSession
from sidecar.upstream.input_required import InputRequired
from sidecar.wire.versions import CAPABILITIES_KEY, MODERN_VERSION

__all__ = ["PREFIX", "RELAY_PURPOSE", "StateRelay", "is_relayed", "relayed_round"]

RELAY_PURPOSE = b"omb-sidecar/relayed-state/1"
PREFIX = "relay."  # never in a sealed state's own alphabet (URL-safe base64)
ASKED_ABOUT = ("elicitation", "sampling", "roots")  # what a server's questions may need


def is_relayed(state: object) -> bool:
    return isinstance(state, str) and state.startswith(PREFIX)


class StateRelay:
    """The relayed states of one request of one caller: `wrap` the server's questions for
    the engine, `open` the state the engine brings back.

    Made for every 2026-07-28 request that could be relayed, and used by few (only a
    2026-07-28 server's round, or a request bringing a relayed state back): so it keeps
    what it was given and reads the sealer, the binding and the capabilities only when
    one of those asks."""

    def __init__(self, face: Face, session: EngineSession, caller: str, method: str, params: dict[str, Any]) -> None:
        self.face, self.session, self.caller, self.method, self.request_params = face, session, caller, method, params
        self.round: tuple[StateClaim | None, Any] = (None, None)  # the claim and answers a request brings back

    def _bound(self) -> tuple[Any, str, dict[str, Any], float]:
        """The sealer, what a state is bound to (the request's method and name, its
        arguments) and how long it lives, from the gate's confirmation stage."""
        stage = _confirm_stage(self.face)
        name = self.request_params.get("uri" if self.method == "resources/read" else "name")
        arguments = self.request_params.get("arguments")
        label = f"{self.method} {name if isinstance(name, str) else ''}"
        return stage.sealer(), label, arguments if isinstance(arguments, dict) else {}, float(stage.state_seconds)

    def wrap(self, asked: InputRequired, confirmed: bool) -> msgspec.Raw:
        """The engine's input-required result: the server's questions, keys and all, and a
        state of the sidecar's holding the server's. A question the engine did not declare
        it can answer is `InputRefused`, naming the capability."""
        from sidecar.front.eras.asking import missing_capability

        for question in asked.questions.values():
            missing = missing_capability(self.session, question.method, question.params)
            if missing is not None:
                raise InputRefused(missing, question.method)
        sealer, label, arguments, seconds = self._bound()
        claim = sealer.new_claim(bot=self.face.config.bot.id, face=self.face.name, tool=label, arguments=arguments,
                                 seconds=seconds, caller=self.caller, inner=asked.state, confirmed=confirmed)
        questions = {key: {"method": q.method, "params": q.params} for key, q in asked.questions.items()}
        return msgspec.Raw(msgspec.json.encode({
            "resultType": "input_required", "inputRequests": questions,
            "requestState": PREFIX + sealer.seal(claim, RELAY_PURPOSE)}))

    def open(self, state: object) -> StateClaim:
        """The claim of a relayed state made for exactly this request of this caller, once;
        else invalid params."""
        from sidecar.gate.budget.store import StoreUnavailable

        token = state[len(PREFIX):] if isinstance(state, str) else None
        sealer, label, arguments, _ = self._bound()
        try:
            claim: StateClaim | None = sealer.redeem_claim(
                token, bot=self.face.config.bot.id, face=self.face.name, tool=label, arguments=arguments,
                caller=self.caller, purpose=RELAY_PURPOSE)
        except StoreUnavailable:  # fail closed: a state that cannot be marked used is not honoured
            raise EngineInputError("params.requestState could not be checked: the shared store did not answer") \
                from None
        if claim is None:
            raise EngineInputError(REQUEST_STATE_NOT_VALID)
        return claim

    def params(self, params: dict[str, Any], claim: StateClaim | None, answers: Any) -> dict[str, Any]:
        """What the server is sent for this round: the engine's capabilities, its answers
        (when they are the server's) and the server's own state (when it gave one)."""
        sent = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
        meta = sent.get("_meta")
        sent["_meta"] = {**(meta if isinstance(meta, dict) else {}), CAPABILITIES_KEY: self.capabilities()}
        if answers is not None:
            sent["inputResponses"] = answers
        if claim is not None and claim.inner is not None:
            sent["requestState"] = claim.inner
        return sent

    def capabilities(self) -> dict[str, Any]:
        """What the server is told this client can be asked: the engine's own declaration."""
        declared = self.session.client_capabilities or {}
        return {name: declared[name] for name in ASKED_ABOUT if isinstance(declared.get(name), dict)}


def _confirm_stage(face: Face) -> Any:
    """The gate's confirmation stage, whose sealer (key, spent-set) relayed states share."""
    return face.gate.confirm_stage()  # the one the gate makes on its first confirmation


def relayed_round(face: Face, session: EngineSession, caller: str,
                  params: dict[str, Any], method: str) -> tuple[StateRelay | None, StateClaim | None, Any]:
    """For a 2026-07-28 engine's request: its relay, the claim of the relayed state it
    brings back (None when it brings none, or another kind), and the answers meant for the
    server (`inputResponses`, unless they answer the sidecar's own question)."""
    if session.protocol_version != MODERN_VERSION:
        return None, None, None
    relay = StateRelay(face, session, caller, method, params)
    if "requestState" not in params and "inputResponses" not in params:  # a first round: nothing to open
        return relay, None, None
    state = params.get("requestState")
    claim = relay.open(state) if is_relayed(state) else None
    responses = params.get("inputResponses")
    answers = responses if isinstance(responses, dict) and (claim is not None or state is None) else None
    return relay, claim, answers
