"""The seam between the pool and a transport: a Channel carries one upstream's frames.

A stdio child, a Streamable HTTP session and a legacy SSE session all look the same to
the supervisor: frames go in with `write` (one JSON-RPC message, newline-terminated),
messages come out through the `on_line` callback given when the channel was opened,
`gone` is done when nothing more can come, and `stop` releases everything (never
raising). `describe_end` says why it ended, in words fit for an error to the model.
Which transport an entry opens is `sidecar.upstream.transports`; the transports import
this seam, never the other way round.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from sidecar.config import ServerConfig
    from sidecar.wire.framing import DropSink

__all__ = ["Channel", "ChannelOpener", "LineSink"]

LineSink = Callable[[bytes], None]


class Channel(Protocol):
    @property
    def gone(self) -> asyncio.Future[None]: ...

    def write(self, data: bytes) -> None: ...

    async def stop(self) -> None: ...

    def describe_end(self) -> str: ...

    def diagnostics(self) -> str:
        """Recent diagnostic text (a child's stderr tail); never shown to the engine."""
        ...


# How a supervisor opens its upstream's transport: `sidecar.upstream.transports.open_channel`
# in a running sidecar, in-memory fakes in the tests' harness (tests/harness).
ChannelOpener = Callable[["ServerConfig", LineSink, "DropSink | None"], Awaitable[Channel]]
