"""The rounds of a 2026-07-28 engine's request whose session-era upstream asks mid-call.

Owns the decision for each stateless `tools/call`, `prompts/get` or `resources/read`: a
new call (held, so a question can wait for the engine's next round), the next round of
a held call (its `requestState` a question state this process sealed), or a refusal. A
relayed state (a 2026-07-28 server's round passed through, `sidecar.front.eras.relayed`)
starts the call again; the call opens it.
Owns the question states too: sealed with the key, binding and spent-set of the gate's
confirmation states (`sidecar.gate.confirmation.sealed`), under a purpose of their own so a question
state never opens as a confirmation and the other way round; bound to the bot, face,
caller, the request's name and arguments, expiring after the policy's
`confirmStateSeconds`, accepted once. A state that is altered, foreign, expired, used,
or whose call is not held here (another replica, or its bound passed) gets one answer,
an error naming what to do; nothing is left waiting.

The call itself lives in this process (`sidecar.front.eras.held`): a balancer in front
of several replicas must send one engine's rounds to the same replica (affinity); the
states open on every replica that shares the key, and a replica that does not hold the
call says so.
"""

from __future__ import annotations

import logging
from typing import Any

from sidecar.errors import REQUEST_STATE_NOT_VALID
from sidecar.concurrency import Jobs
from sidecar.front.eras.held import HeldCall, Round
from sidecar.front.eras.relayed import is_relayed
from sidecar.front.shutdown import shutdown_words
from sidecar.gate.confirmation.stage import ConfirmStage
from sidecar.hub.face import Face
from sidecar.redact import Redactor
from sidecar.wire import Relayed, Request

__all__ = ["ASK_PURPOSE", "HeldCalls", "QUESTION_KEY", "takes_rounds"]

log = logging.getLogger(__name__)

ASK_PURPOSE = b"omb-sidecar/held-question/1"
QUESTION_KEY = "upstream"  # the key of the upstream's question in `inputRequests`
HELD_METHODS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
RELAYED_CAPABILITIES = ("elicitation", "sampling", "roots")
MAX_HELD = 64  # calls holding a question for their engine at once, per face
NOT_HELD = ("the call this requestState continues is not held by this sidecar (its time ran out, or another "
            "replica holds it: give one engine's requests affinity to one replica); send the request again without it")


def takes_rounds(req: Request, capabilities: dict[str, Any]) -> bool:
    """A request this room serves: one that may be asked a question (the engine declared a
    way to answer one) or that continues one."""
    if req.method not in HELD_METHODS:
        return False
    if "requestState" in req.params:
        return True
    if capabilities:  # most engines declare none of them: no loop then (this runs on every stateless call)
        for name in RELAYED_CAPABILITIES:
            if isinstance(capabilities.get(name), dict):
                return True
    return False


class HeldCalls:
    """Every held call of one face, by the id of the question state it waits on."""

    def __init__(self, face: Face, redactor: Redactor) -> None:
        self.face, self.redactor = face, redactor
        self.by_state: dict[str, HeldCall] = {}
        self.running: set[HeldCall] = set()
        self._jobs: Jobs | None = None

    # -- a round comes in ----------------------------------------------------------------

    def round(self, req: Request, caller: str, capabilities: dict[str, Any], this: Round) -> None:
        state = req.params.get("requestState")
        if state is None:
            self._start(req, caller, capabilities, this)
            return
        if is_relayed(state):  # a 2026-07-28 server's round passed through: the call opens it (relayed)
            self._start(req, caller, capabilities, this)
            return
        sealer = self._sealer()
        if sealer.open(state, ASK_PURPOSE) is None:
            if sealer.open(state) is not None:  # a confirmation's state: the gate's confirmation reads it
                self._start(req, caller, capabilities, this)
            else:
                this.refuse(req.method, REQUEST_STATE_NOT_VALID)
            return
        self._resume(req, caller, state, this)

    def _start(self, req: Request, caller: str, capabilities: dict[str, Any], this: Round) -> None:
        call = HeldCall(self.face, self.redactor, req, caller, capabilities, self._seconds())
        call.on_question, call.on_end = self._asked, self._ended
        self.running.add(call)
        call.start(this)

    def _resume(self, req: Request, caller: str, state: object, this: Round) -> None:
        from sidecar.gate.budget.store import StoreUnavailable

        name, arguments = _bound_to(req)
        try:
            claim = self._sealer().redeem_claim(state, bot=self.face.config.bot.id, face=self.face.name, tool=name,
                                                arguments=arguments, caller=caller, purpose=ASK_PURPOSE)
        except StoreUnavailable:  # fail closed: a state that cannot be marked used is not honoured
            this.refuse(req.method, "params.requestState could not be checked: the shared store did not answer")
            return
        if claim is None:
            this.refuse(req.method, REQUEST_STATE_NOT_VALID)
            return
        call = self.by_state.pop(claim.id, None)
        if call is None or call.over:
            this.refuse(req.method, NOT_HELD)
            return
        responses = req.params.get("inputResponses")
        call.resume(this, responses.get(QUESTION_KEY) if isinstance(responses, dict) else None)

    def gone(self, this: Round) -> None:
        """The HTTP request of a round is over (answered, or its client left)."""
        if this.call is not None:
            this.call.round_gone(this)

    # -- a held call asks, or ends ---------------------------------------------------------

    def _asked(self, call: HeldCall, relayed: Relayed) -> None:
        if len(self.by_state) >= MAX_HELD:
            call.stop(f"more than {MAX_HELD} calls are waiting on their engines' answers")
            return
        name, arguments = _bound_to(call.request)
        sealer = self._sealer()
        claim = sealer.new_claim(bot=self.face.config.bot.id, face=self.face.name, tool=name, arguments=arguments,
                                 seconds=call.seconds, caller=call.caller)
        self.by_state[claim.id] = call
        call.state_ids.add(claim.id)
        question = {"method": relayed.method, "params": relayed.params if relayed.params else {}}
        call.put_question({"resultType": "input_required", "inputRequests": {QUESTION_KEY: question},
                           "requestState": sealer.seal(claim, ASK_PURPOSE)})

    def _ended(self, call: HeldCall) -> None:
        self.running.discard(call)
        for ident in call.state_ids:
            self.by_state.pop(ident, None)
        if call.jobs.close_idle():  # the usual end: its answer came, nothing of it still runs
            return
        if self._jobs is None:
            self._jobs = Jobs()
        self._jobs.spawn(call.aclose())

    def stop_all(self, why: str, waiting_only: bool = False) -> int:
        """The sidecar stops: every held call's upstream is told, every open round answered
        (`waiting_only`: only the calls waiting on their engine, with no round open)."""
        calls = [c for c in self.running if not (waiting_only and c.round is not None)]
        for call in calls:
            call.stop(shutdown_words(why))
        return len(calls)

    async def aclose(self) -> None:
        if self._jobs is not None:
            await self._jobs.aclose()

    # -- the seal -----------------------------------------------------------------------------

    def _confirm_stage(self) -> ConfirmStage:
        stage: ConfirmStage = self.face.gate.confirm_stage()  # the one the gate makes on its first confirmation
        return stage

    def _sealer(self) -> Any:
        return self._confirm_stage().sealer()

    def _seconds(self) -> float:
        return float(self._confirm_stage().state_seconds)


def _bound_to(req: Request) -> tuple[str, dict[str, Any]]:
    """What a question state is bound to: the request's method and name, and its arguments."""
    key = HELD_METHODS.get(req.method, "name")
    name = req.params.get(key)
    arguments = req.params.get("arguments")
    label = f"{req.method} {name if isinstance(name, str) else ''}"
    return label, arguments if isinstance(arguments, dict) else {}

