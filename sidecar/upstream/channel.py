"""The seam between the pool and a transport: a Channel carries one upstream's frames.

A stdio child, a Streamable HTTP session and a legacy SSE session all look the same to
the supervisor: frames go in with `write` (one JSON-RPC message, newline-terminated),
messages come out through the `on_line` callback given when the channel was opened,
`gone` is done when nothing more can come, and `stop` releases everything (never
raising). `describe_end` says why it ended, in words fit for an error to the model.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

from sidecar.config import ServerConfig
from sidecar.errors import UpstreamUnavailable
from sidecar.wire.framing import DEFAULT_LINE_CAP, DropSink

__all__ = ["Channel", "open_channel", "LineSink"]

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


async def open_channel(server: ServerConfig, on_line: LineSink, on_dropped: DropSink | None = None) -> Channel:
    """Open the transport the server's entry names; UpstreamUnavailable if it cannot.

    `on_dropped` learns of each message refused unread (over a size cap), by its edges."""
    if server.type == "stdio":
        from sidecar.upstream.stdio import spawn_child

        try:
            return await spawn_child(server, on_line, server.max_message_bytes or DEFAULT_LINE_CAP, on_dropped)
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise UpstreamUnavailable(f"its command could not be started ({reason})") from None
    if server.type == "http":
        try:
            from sidecar.upstream.http import open_http_channel  # type: ignore[import-not-found,unused-ignore]
        except ImportError:
            raise UpstreamUnavailable("Streamable HTTP upstreams are not available in this build") from None
        return await open_http_channel(server, on_line, on_dropped)  # type: ignore[no-any-return,unused-ignore]
    try:
        from sidecar.upstream.sse import open_sse_channel  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise UpstreamUnavailable("SSE upstreams are not available in this build") from None
    return await open_sse_channel(server, on_line, on_dropped)  # type: ignore[no-any-return,unused-ignore]
