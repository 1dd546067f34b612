"""Opening the transport a server's entry names: a stdio child, a Streamable HTTP session
or a legacy SSE session, each behind the `Channel` seam.

Owns the choice by `type` and the words of a failure to open (`UpstreamUnavailable`: a
command that cannot start, a URL transport missing from this build). The HTTP and SSE
modules load only when such a server opens, so a stdio-only start never loads aiohttp.
"""

from __future__ import annotations

from sidecar.config import ServerConfig
from sidecar.errors import UpstreamUnavailable
from sidecar.upstream.channel import Channel, Inbox
from sidecar.wire.framing import DEFAULT_LINE_CAP

__all__ = ["open_channel"]


async def open_channel(server: ServerConfig, inbox: Inbox) -> Channel:
    """Open the transport the server's entry names, reporting to `inbox`;
    UpstreamUnavailable if it cannot."""
    if server.type == "stdio":
        from sidecar.upstream.stdio import spawn_child

        try:
            return await spawn_child(server, inbox.feed, server.max_message_bytes or DEFAULT_LINE_CAP, inbox.dropped)
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise UpstreamUnavailable(f"its command could not be started ({reason})") from None
    if server.type == "http":
        try:
            from sidecar.upstream.http import open_http_channel  # type: ignore[import-not-found,unused-ignore]
        except ImportError:
            raise UpstreamUnavailable("Streamable HTTP upstreams are not available in this build") from None
        return await open_http_channel(server, inbox)  # type: ignore[no-any-return,unused-ignore]
    try:
        from sidecar.upstream.sse import open_sse_channel  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise UpstreamUnavailable("SSE upstreams are not available in this build") from None
    return await open_sse_channel(server, inbox)  # type: ignore[no-any-return,unused-ignore]
