"""The one mapping of a tool call's outcome to what the engine receives.

`call_answer` turns an ended call into its answer: a completed call's result bytes as
they are (spliced, never re-encoded); an upstream that could not take the call as a
tool error result (the model may try again later); any other failure raised, for the
front to frame with `error_body`: an upstream's own JSON-RPC error object passed on
as it came (`code`, `message`, `data`), only redacted, never decoded again; the
sidecar's own errors as `code` and redacted `message`. A stage bug raises its original
exception, so the engine gets the same internal error as any unexpected fault.
"""

from __future__ import annotations

import msgspec

from sidecar.errors import CallCancelled, SidecarError, UpstreamError, UpstreamUnavailable
from sidecar.gate.call import StageFault, ToolCall
from sidecar.gate.route import tool_error
from sidecar.redact import Redactor

__all__ = ["call_answer", "error_body"]


def call_answer(call: ToolCall, redact: Redactor) -> msgspec.Raw:
    """The result of an ended call, or its error raised (CallCancelled: no answer at all)."""
    if call.outcome == "completed" and call.result is not None:
        return call.result
    error = call.error or SidecarError("the call ended without a result")
    if isinstance(error, UpstreamUnavailable):
        return tool_error(redact(error.message))
    if isinstance(error, StageFault):
        raise error.cause
    raise error


def error_body(error: SidecarError, redact: Redactor) -> bytes:
    """The JSON-RPC error object for `error`, secrets redacted."""
    if isinstance(error, UpstreamError) and error.raw is not None:
        return redact.json(error.raw)
    assert not isinstance(error, CallCancelled), "a cancelled request gets no answer"
    body: dict[str, object] = {"code": error.code, "message": redact(error.message)}
    if error.data is None:
        return msgspec.json.encode(body)
    body["data"] = error.data
    return redact.json(msgspec.json.encode(body))
