"""What a method handler may use of the session that runs it, and the handler's own type.

The method table (`sidecar.front.methods`) and the dispatcher that runs it
(`sidecar.front.dispatcher`) both depend on this room and not on each other: the
dispatcher is given a table, and a handler sees only the `Handling` surface below.
A handler is called with the request and its params already typed (`sidecar.wire.requests`,
converted once by the dispatcher): it reads the struct, and forwards the request's own params.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from sidecar.hub.face import Face
from sidecar.hub.session import EngineSession
from sidecar.redact import Redactor
from sidecar.upstream import Upstream
from sidecar.wire import Request
from sidecar.wire.requests import Params

if TYPE_CHECKING:
    from sidecar.gate.asked import EngineAsker

__all__ = ["Handler", "Handling", "MethodTable", "Result"]

Result = bytes | msgspec.Raw | dict[str, Any]


class Handling(Protocol):
    """The part of a dispatcher a method handler reads: its face, its session, the
    redactor for answers, and forwarding one request to one upstream."""

    face: Face
    session: EngineSession
    redact: Redactor
    ask_engine: EngineAsker  # how a 2026-07-28 server's questions reach this session's engine

    def progress_sink(self, req: Request, params: Params) -> Callable[[dict[str, Any]], None] | None: ...

    def mark_sent(self, req: Request) -> Callable[[Any, int], None]: ...

    async def forward(self, req: Request, params: Params, upstream: Upstream,
                      body: dict[str, Any] | None = None) -> msgspec.Raw: ...


# (session, request, its typed params: the struct `sidecar.wire.requests.PARAMS` names)
Handler = Callable[[Handling, Request, Any], Awaitable[Result]]
MethodTable = Mapping[str, Handler]
