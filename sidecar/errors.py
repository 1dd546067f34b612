"""The one error tree of the sidecar, sorted by whose fault it is, and its codes.

Engine-input errors become JSON-RPC errors for the engine (each error's `code` and
`message`, framed by `sidecar.wire.encode_error`, the one to-wire mapping); upstream
errors become clear, secret-free messages; config errors stop start-up (or skip one
entry) with the key's path.
"""

from __future__ import annotations

__all__ = [
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
    "ConfigError",
    "CallCancelled",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
UPSTREAM_UNAVAILABLE = -32000


class SidecarError(Exception):
    """Base of every error the sidecar raises on purpose."""

    code: int = INTERNAL_ERROR

    def __init__(self, message: str, *, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class EngineInputError(SidecarError):
    """The engine sent something we refuse: bad frame, bad params, unknown name."""

    code = INVALID_PARAMS


class UpstreamError(SidecarError):
    """An upstream answered with an error; its code and words are kept (addresses removed).
    An error the upstream sent as a JSON-RPC error object keeps that object's bytes
    (`raw`), so a tools/call passes it on to the engine as it came, `data` and all."""

    def __init__(self, message: str, *, code: int = INTERNAL_ERROR, data: object = None,
                 raw: bytes | None = None) -> None:
        super().__init__(message, code=code)
        self.data = data
        self.raw = raw


class UpstreamUnavailable(SidecarError):
    """An upstream could not take the request: not started, crashed, restarting, timed out."""

    code = UPSTREAM_UNAVAILABLE


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
