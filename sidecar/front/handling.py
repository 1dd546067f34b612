"""What a method handler may use of the session that runs it, and the handler's own type.

The method table (`sidecar.front.methods`) and the dispatcher that runs it
(`sidecar.front.dispatcher`) both depend on this room and not on each other: the
dispatcher is given a table, and a handler sees only the `Handling` surface below.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

import msgspec

from sidecar.hub.face import Face
from sidecar.hub.session import EngineSession
from sidecar.redact import Redactor
from sidecar.upstream import Upstream
from sidecar.wire import Request

__all__ = ["Handler", "Handling", "MethodTable", "Result"]

Result = bytes | msgspec.Raw | dict[str, Any]


class Handling(Protocol):
    """The part of a dispatcher a method handler reads: its face, its session, the
    redactor for answers, and forwarding one request to one upstream."""

    face: Face
    session: EngineSession
    redact: Redactor

    def progress_sink(self, req: Request) -> Callable[[dict[str, Any]], None] | None: ...

    def mark_sent(self, req: Request) -> Callable[[Any, int], None]: ...

    async def forward(self, req: Request, upstream: Upstream,
                      params: dict[str, Any] | None = None) -> msgspec.Raw: ...


Handler = Callable[[Handling, Request], Awaitable[Result]]
MethodTable = Mapping[str, Handler]
