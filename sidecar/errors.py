"""The one error tree of the sidecar, sorted by whose fault it is, and its codes.

Engine-input errors become JSON-RPC errors for the engine (each error's `code` and
`message`, framed by `sidecar.wire.encode_error`, the one to-wire mapping); upstream
errors become clear, secret-free messages; config errors stop start-up (or skip one
entry) with the key's path.

An upstream that cannot answer is one of four faults, whatever its transport:
`UpstreamUnavailable` (gone, refused, unreachable), `SignInNeeded` (a person must run
`omb-sidecar signin NAME`), `TooLarge` (an answer refused unread: over a size cap or
nested too deep) and `TimedOut`. Each opens its words with its label, so the model reads
the kind first, the same words from a stdio child as from a URL server.
"""

from __future__ import annotations

__all__ = [
    "REQUEST_STATE_NOT_VALID",
    "StoreUnavailable",
    "PARSE_ERROR",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "INVALID_PARAMS",
    "INTERNAL_ERROR",
    "SidecarError",
    "EngineInputError",
    "UpstreamError",
    "UpstreamUnavailable",
    "SignInNeeded",
    "TooLarge",
    "TimedOut",
    "Refused",
    "Forbidden",
    "Unreachable",
    "BrokeOff",
    "refusal",
    "FAULT_KINDS",
    "upstream_fault",
    "refused_unread",
    "ConfigError",
    "CallCancelled",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
UPSTREAM_UNAVAILABLE = -32000
# One answer (invalid params) for every request state the sidecar cannot honour, a gate
# confirmation's or a relayed question's: which check failed is not said.
REQUEST_STATE_NOT_VALID = ("params.requestState is not valid (altered, foreign, expired or used): "
                           "send the request again without it")


class SidecarError(Exception):
    """Base of every error the sidecar raises on purpose."""

    code: int = INTERNAL_ERROR
    data: object = None  # the JSON-RPC error's `data` member, when the error has one

    def __init__(self, message: str, *, code: int | None = None, data: object = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if data is not None:
            self.data = data


class EngineInputError(SidecarError):
    """The engine sent something we refuse: bad frame, bad params, unknown name."""

    code = INVALID_PARAMS


class UpstreamError(SidecarError):
    """An upstream answered with an error; its code and words are kept (addresses removed).
    An error the upstream sent as a JSON-RPC error object keeps that object's bytes
    (`raw`), so a tools/call passes it on to the engine as it came, `data` and all."""

    def __init__(self, message: str, *, code: int = INTERNAL_ERROR, data: object = None,
                 raw: bytes | None = None) -> None:
        super().__init__(message, code=code, data=data)
        self.raw = raw


class UpstreamUnavailable(SidecarError):
    """An upstream could not take the request: not started, crashed, restarting, refused.

    `detail` is what happened without the label or the server's name (for the logs and the
    upstream's state); `message` is what the engine reads (`upstream_fault` builds both)."""

    code = UPSTREAM_UNAVAILABLE
    label = "Unavailable"

    def __init__(self, message: str, *, detail: str | None = None) -> None:
        super().__init__(message)
        self.detail = message if detail is None else detail


class SignInNeeded(UpstreamUnavailable):
    """The server wants a person to sign in (again); the words name the command."""

    label = "Sign-in needed"


class TooLarge(UpstreamUnavailable):
    """The upstream's answer was refused unread: over a size cap, or nested too deep."""

    label = "Too large"


class TimedOut(UpstreamUnavailable):
    """The upstream did not answer in the time it had."""

    label = "Timed out"


class Refused(UpstreamUnavailable):
    """A server at an address answered HTTP 401: it would not take the request as sent (its
    headers or a sign-in). The engine reads it as unavailable; a check tells it apart by this
    type and its `status`, never by the words."""

    status = 401


class Forbidden(Refused):
    """A server at an address answered HTTP 403."""

    status = 403


class Unreachable(UpstreamUnavailable):
    """A server's address could not be reached: no connection was made."""


class BrokeOff(UpstreamUnavailable):
    """A server began an answer and broke it off."""


def refusal(status: int, words: str) -> Refused:
    """The refusal of HTTP `status` (401 or 403), in its own type."""
    return (Forbidden if status == 403 else Refused)(words)


FAULT_KINDS: tuple[type[UpstreamUnavailable], ...] = (UpstreamUnavailable, SignInNeeded, TooLarge, TimedOut)


def upstream_fault(kind: type[UpstreamUnavailable], alias: str, detail: str, *, is_call: bool = False) -> UpstreamUnavailable:
    """The fault as the engine reads it: `<label>: upstream '<alias>' <detail>`, and for a
    tools/call that said it was not retried (RELIABILITY rule 5)."""
    tail = "; the call was not retried" if is_call and "not retried" not in detail else ""
    return kind(f"{kind.label}: upstream '{alias}' {detail}{tail}", detail=detail)


def refused_unread(size: int, why: str, *, or_more: bool = False) -> TooLarge:
    """The one wording of an answer refused unread, whatever carried it (a stdio line, an
    HTTP body, an event), so an engine reads the same shape from every transport and front:
    `sent an answer the sidecar refused unread (N bytes, over the C-byte line cap)`.
    `or_more`: the reading stopped at the cap, so N is what was read, not the whole."""
    return TooLarge(f"sent an answer the sidecar refused unread ({size} bytes{' or more' if or_more else ''}, {why})")


class StoreUnavailable(SidecarError):
    """The shared store (`store.url`) did not answer in time, or refused."""


class CallCancelled(SidecarError):
    """The engine cancelled the request: it gets no answer, and a late result is dropped."""


class ConfigError(SidecarError):
    """The configuration is wrong at a named path, e.g. `mcpServers.notes.args[1]`."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}" if path and path not in problem else problem)
        self.path = path
        self.problem = problem
