"""The rounds of a 2026-07-28 server that answers a tool call with questions: each
question goes to the engine (through the asker the front gave the call), and the call
is sent again with the answers and the server's state, until the server finishes.

Owns the loop and its bound (`MAX_INPUT_ROUNDS` rounds, then the call ends with a tool
error saying so) and the words the model reads when the engine cannot answer: a missing
capability named, a refusal or no answer in time. The asker is given by the front from
what the engine declared (`sidecar.front.eras.asking`); the gate never asks on its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from sidecar.errors import UpstreamError
from sidecar.gate.budget.charge import text_result
from sidecar.redact import Redactor
from sidecar.upstream.input_required import InputRequired, read_input_required

__all__ = ["EngineAsker", "InputRefused", "MAX_INPUT_ROUNDS", "answer_rounds"]

MAX_INPUT_ROUNDS = 10  # the SDKs' own default for a client driving these rounds
EngineAsker = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]  # (method, params) -> the engine's result
Send = Callable[[dict[str, Any]], Awaitable[msgspec.Raw]]  # the call again, with these params
Relay = Callable[[InputRequired], msgspec.Raw]  # the questions as the engine's own input-required result


class InputRefused(Exception):
    """The engine could not or did not answer a question; `words` say which and why."""

    def __init__(self, words: str, method: str = "") -> None:
        super().__init__(words)
        self.words, self.method = words, method


async def answer_rounds(answer: msgspec.Raw, params: dict[str, Any], send: Send, ask: EngineAsker | None,
                        server: str, scrub: Redactor | None, tool: bool = True,
                        relay: Relay | None = None) -> msgspec.Raw:
    """The server's final answer to the call, its questions answered on the way; when the
    engine cannot answer or the server asks past the bound, a tool error (`tool`), or
    else (a prompt, a resource) an `UpstreamError` with the same words. With `relay` (an
    engine that speaks these rounds itself) the first questions go back to the engine as
    they are, and the engine's next round continues the call (sidecar.front.eras.relayed)."""
    for _ in range(MAX_INPUT_ROUNDS):
        asked = read_input_required(answer)
        if asked is None:
            return answer
        if relay is not None:
            try:
                return relay(asked)
            except InputRefused as refused:
                return _refused(server, refused.method, refused.words, tool)
        responses: dict[str, Any] = {}
        for key, question in asked.questions.items():
            if ask is None:
                return _refused(server, question.method, "this client cannot be asked anything during a call", tool)
            shown = scrub.clean(question.params) if scrub else question.params
            try:
                responses[key] = await ask(question.method, shown)
            except InputRefused as refused:
                return _refused(server, question.method, refused.words, tool)
        again = {**params, "inputResponses": responses}
        if asked.state is not None:
            again["requestState"] = asked.state
        answer = await send(again)
    if read_input_required(answer) is None:
        return answer
    return _ended(f"the server '{server}' asked for input more than {MAX_INPUT_ROUNDS} times in one call; "
                  "the call was stopped", tool)


def _refused(server: str, method: str, words: str, tool: bool) -> msgspec.Raw:
    return _ended(f"the server '{server}' needs an answer to {method} to finish this call, and none came: {words}", tool)


def _ended(words: str, tool: bool) -> msgspec.Raw:
    if not tool:
        raise UpstreamError(words)
    return msgspec.Raw(msgspec.json.encode(text_result(words, True)))
