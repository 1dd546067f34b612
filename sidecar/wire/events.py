"""What an engine session sends toward its engine, typed: answers, error answers,
notifications and requests relayed from upstreams (or the sidecar's own).

The session and the dispatcher emit these; each front encodes them at its own edge
(`encode_event` is the one JSON-RPC encoding: stdio writes it as a line, an HTTP session
routes by the event's kind, id and progress token first, the stateless revision splices
its fields into an answer). A front never decodes what the sidecar itself produced.
No I/O here.
"""

from __future__ import annotations

from typing import Any

import msgspec

from sidecar.wire.jsonrpc import (
    RequestId,
    encode_error,
    encode_error_raw,
    encode_notification,
    encode_request,
    encode_result,
)
from sidecar.wire.requests import progress_token

_encode = msgspec.json.encode

__all__ = ["ANSWER_HEAD", "RESULT_KEY", "Answer", "AnswerResult", "ErrorAnswer", "Event", "Notice", "Relayed", "encode_event"]


AnswerResult = bytes | msgspec.Raw | dict[str, Any]
ANSWER_HEAD = b'{"jsonrpc":"2.0","id":'  # an answer's text up to its id, and from its id to the result
RESULT_KEY = b',"result":'


class Answer(msgspec.Struct, frozen=True):
    """A success answer; `result` as bytes/Raw is spliced in unparsed."""

    id: RequestId
    result: AnswerResult


class ErrorAnswer(msgspec.Struct, frozen=True):
    """An error answer (`id` None when the frame's id could not be read). `raw`, when
    given, is an upstream's error object passed through as it came; `code` is its code."""

    id: RequestId | None
    code: int
    message: str
    data: Any = None
    raw: msgspec.Raw | None = None


class Notice(msgspec.Struct, frozen=True):
    """A notification toward the engine."""

    method: str
    params: Any = None

    @property
    def progress_token(self) -> int | str | None:
        """The token a progress notification carries (an integer or a string), else None."""
        return progress_token(self.params)


class Relayed(msgspec.Struct, frozen=True):
    """A request toward the engine under a session-fresh id (sampling, elicitation, roots)."""

    id: int
    method: str
    params: Any = None  # a dict, an upstream's Raw params, or None


Event = Answer | ErrorAnswer | Notice | Relayed


def encode_event(event: Event) -> bytes:
    """The event as one JSON-RPC frame, newline-terminated."""
    if type(event) is Answer:
        result = event.result
        if type(result) is msgspec.Raw:  # an upstream's result, as it came: spliced under the id
            return b"".join((ANSWER_HEAD, _encode(event.id), RESULT_KEY, result, b"}\n"))
        return encode_result(event.id, result)
    if type(event) is Notice:
        return encode_notification(event.method, event.params)
    if type(event) is Relayed:
        return encode_request(event.id, event.method, event.params)
    assert type(event) is ErrorAnswer
    if event.raw is not None and event.id is not None:
        return encode_error_raw(event.id, event.raw)
    return encode_error(event.id, event.code, event.message, event.data)
