"""Reading a 2026-07-28 server's input-required result: the questions it puts to the
client before it can finish a request, and the state it wants back.

Owns the cheap test (`resultType` read at the top level, every other member skipped)
and the decoding of the questions: a map of keys to `{method, params}` whose method is
one a client answers (`elicitation/create`, `sampling/createMessage`, `roots/list`).
Refuses (as `None` from `read_input_required`) anything that is not an input-required
result; raises `UpstreamError` for one whose questions cannot be read. No I/O.
"""

from __future__ import annotations

from typing import Any

import msgspec

from sidecar.errors import UpstreamError

__all__ = ["ANSWERABLE", "InputRequired", "Question", "read_input_required"]

ANSWERABLE = frozenset({"elicitation/create", "sampling/createMessage", "roots/list"})


class _Kind(msgspec.Struct):
    resultType: Any = None  # noqa: N815 - the wire's name


class Question(msgspec.Struct, frozen=True):
    method: str
    params: dict[str, Any] = {}


class _Asked(msgspec.Struct):
    inputRequests: dict[str, Question] | None = None  # noqa: N815
    requestState: str | None = None  # noqa: N815


_kind = msgspec.json.Decoder(_Kind)
_asked = msgspec.json.Decoder(_Asked)


class InputRequired(msgspec.Struct, frozen=True):
    questions: dict[str, Question]
    state: str | None


def read_input_required(result: bytes | msgspec.Raw) -> InputRequired | None:
    """The questions of an input-required result; None for any other result."""
    try:
        if _kind.decode(result).resultType != "input_required":
            return None
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None  # not an object: not a question either
    try:
        asked = _asked.decode(result)
    except (msgspec.DecodeError, msgspec.ValidationError):
        raise UpstreamError("the server asked for input in a result that cannot be read") from None
    questions = asked.inputRequests or {}
    odd = sorted(q.method for q in questions.values() if q.method not in ANSWERABLE)
    if odd:
        raise UpstreamError(f"the server asked for input the client cannot give: {', '.join(odd)}")
    if not questions and asked.requestState is None:
        raise UpstreamError("the server asked for input but named no question and no state")
    return InputRequired(questions, asked.requestState)
