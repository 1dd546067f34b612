"""The engine's requests typed: one params struct per MCP method, converted once by the
dispatcher from the frame it already decoded, and the one reader of a progress token.

Owns what the params of each method must hold (a name is a string, arguments an object,
a completion's `ref` names a prompt or a resource by its `type`) and the -32602 words for
params that do not: msgspec's own message, with the place it names written from the
engine's side (`params.name`, `params.ref.type`). Fields a struct does not name are
ignored here and still reach an upstream: a handler forwards the request's own params,
the struct only says what the sidecar itself reads. No I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from sidecar.errors import INVALID_PARAMS, EngineInputError

__all__ = [
    "PROGRESS_TOKEN",
    "CallParams",
    "CancelledParams",
    "CompleteParams",
    "InitializeParams",
    "LevelParams",
    "PageParams",
    "Params",
    "PromptParams",
    "PromptRef",
    "ResourceRef",
    "TaskParams",
    "UpdateParams",
    "UriParams",
    "params_of",
    "progress_token",
    "request_progress_token",
]

PROGRESS_TOKEN = "progressToken"


class Params(msgspec.Struct, frozen=True, kw_only=True):
    """What every request's params may carry: `_meta` (an object when present)."""

    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")

    @property
    def progress(self) -> int | str | None:
        """The engine's progress token for this request, None when it asked for none."""
        meta = self.meta
        return None if meta is None else progress_token(meta)  # most calls bring no _meta: no call then


class InitializeParams(Params, frozen=True, kw_only=True):
    protocolVersion: str | None = None  # an unknown one gets the newest the sidecar speaks
    capabilities: dict[str, Any] | None = None
    clientInfo: dict[str, Any] | None = None


class PageParams(Params, frozen=True, kw_only=True):
    """The listings: a page is asked for by the cursor of the page before it."""

    cursor: str | None = None


class CallParams(Params, frozen=True, kw_only=True):
    name: str
    arguments: dict[str, Any] | None = None
    task: dict[str, Any] | None = None  # asks for the call to run as a task (2025-11-25)


class UriParams(Params, frozen=True, kw_only=True):
    uri: str


class PromptParams(Params, frozen=True, kw_only=True):
    name: str
    arguments: dict[str, Any] | None = None


class PromptRef(msgspec.Struct, frozen=True, tag_field="type", tag="ref/prompt"):
    name: str


class ResourceRef(msgspec.Struct, frozen=True, tag_field="type", tag="ref/resource"):
    uri: str


class CompleteParams(Params, frozen=True, kw_only=True):
    ref: PromptRef | ResourceRef


class LevelParams(Params, frozen=True, kw_only=True):
    level: str


class TaskParams(Params, frozen=True, kw_only=True):
    # Left untyped on purpose: every id that is not this session's task, a number as much as
    # a forged string, gets the one "unknown task" answer (the task table's), so nothing
    # about other sessions' tasks can be told from the kind of refusal.
    taskId: Any = None


class UpdateParams(TaskParams, frozen=True, kw_only=True):
    """`tasks/update` (the 2026 tasks extension): the answers to a task's questions."""

    inputResponses: Any = None  # noqa: N815 - the wire's name; checked where it is used


class CancelledParams(Params, frozen=True, kw_only=True):
    requestId: int | str | None = None
    reason: str | None = None


# method -> its params; a method not named here is answered from `Params` alone
PARAMS: dict[str, type[Params]] = {
    "initialize": InitializeParams,
    "tools/list": PageParams,
    "tools/call": CallParams,
    "resources/list": PageParams,
    "resources/templates/list": PageParams,
    "resources/read": UriParams,
    "resources/subscribe": UriParams,
    "resources/unsubscribe": UriParams,
    "prompts/list": PageParams,
    "prompts/get": PromptParams,
    "completion/complete": CompleteParams,
    "logging/setLevel": LevelParams,
    "tasks/get": TaskParams,
    "tasks/cancel": TaskParams,
    "tasks/result": TaskParams,
    "tasks/list": PageParams,
    "tasks/update": UpdateParams,
    "notifications/cancelled": CancelledParams,
}


def params_of(method: str, params: Mapping[str, Any]) -> Params:
    """`params` as the struct of `method`; EngineInputError (-32602) naming the field when
    they do not fit it."""
    if method == "tools/call" and len(params) == 2:  # the common call: a name and arguments, nothing else
        name, arguments = params.get("name"), params.get("arguments")
        if type(name) is str and type(arguments) is dict:  # what `convert` would take (a frame's keys are strings)
            return CallParams(name=name, arguments=arguments)
    try:
        return msgspec.convert(params, PARAMS.get(method, Params))
    except msgspec.ValidationError as exc:
        raise EngineInputError(f"invalid params for {method}: {_engine_side(str(exc))}", code=INVALID_PARAMS) from None


def _engine_side(words: str) -> str:
    """msgspec's path (`$.ref.type`) as the engine wrote it (`params.ref.type`)."""
    if " - at `$" not in words:
        return words + " - at `params`"
    return words.replace(" - at `$", " - at `params")


def progress_token(holder: object) -> int | str | None:
    """The progress token `holder` carries (a request's `_meta`, or a progress notification's
    params): an integer or a string, else None. Every reader of a token reads it here."""
    token = holder.get(PROGRESS_TOKEN) if isinstance(holder, dict) else None
    return token if type(token) is int or type(token) is str else None


def request_progress_token(params: Mapping[str, Any]) -> int | str | None:
    """The token of a request whose params were not typed (the HTTP front routes by it)."""
    return progress_token(params.get("_meta"))
