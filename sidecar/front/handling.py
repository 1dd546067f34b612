"""What a method handler may use of the session that runs it, and the handler's own type.

The method table (`sidecar.front.methods`) and the dispatcher that runs it
(`sidecar.front.dispatcher`) both depend on this room and not on each other: the
dispatcher is given a table, and a handler sees only the `Handling` surface below.
A handler is called with the request and its params already typed (`sidecar.wire.requests`,
converted once by the dispatcher): it reads the struct, and forwards the request's own params.
A starter (`Starter`) is a method's way with no task of its own: called in the reader's
callback, it takes the request (True) when its whole way waits on one future only, and
answers it through `answer`/`fail`; False leaves it to the handler, nothing done.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from sidecar.concurrency import Held
from sidecar.hub.face import Face
from sidecar.hub.session import EngineSession
from sidecar.redact import Redactor
from sidecar.upstream import Upstream
from sidecar.wire import Request
from sidecar.wire.requests import Params

if TYPE_CHECKING:
    from sidecar.gate.asked import EngineAsker

__all__ = ["Handler", "Handling", "MethodTable", "PlainStarter", "Result", "Starter"]

Result = bytes | msgspec.Raw | dict[str, Any]


class Handling(Protocol):
    """The part of a dispatcher a method handler reads: its face, its session, the
    redactor for answers, and forwarding one request to one upstream."""

    face: Face
    session: EngineSession
    redact: Redactor
    ask_engine: EngineAsker  # how a 2026-07-28 server's questions reach this session's engine
    hold: Callable[[asyncio.Future[Any] | Held], None] | None  # the owner of work with no task (`Jobs.hold`)
    spawn: Callable[[Coroutine[Any, Any, None]], None]

    def answer(self, req: Request, result: Result) -> None: ...

    def fail(self, req: Request, exc: Exception) -> None: ...

    async def serve(self, req: Request, result: Awaitable[Result]) -> None: ...

    def progress_sink(self, req: Request, params: Params) -> Callable[[dict[str, Any]], None] | None: ...

    def mark_sent(self, req: Request) -> Callable[[Any, int], None]: ...

    async def forward(self, req: Request, params: Params, upstream: Upstream,
                      body: dict[str, Any] | None = None) -> msgspec.Raw: ...


# (session, request, its typed params: the struct `sidecar.wire.requests.PARAMS` names)
Handler = Callable[[Handling, Request, Any], Awaitable[Result]]
MethodTable = Mapping[str, Handler]
Starter = Callable[[Handling, Request, Any], bool]
# `tools/call`'s starter given its params' name, arguments and `_meta`, read raw by the
# dispatcher when they are all the params hold (no struct made for them); as a `Starter` otherwise.
PlainStarter = Callable[[Handling, Request, str, dict[str, Any], "dict[str, Any] | None"], bool]
