"""The seam between a connection and a transport, in h11's shape: typed messages go down,
read frames or typed faults come up.

Down: the connection hands its channel one `Outgoing` per message with `send`: the
message as data (id, method, params) and its bytes, encoded once by the connection. A
stdio child writes the bytes; a URL channel reads what it needs from the fields (the
method for a header, the id to answer) and never parses the bytes again.

Up: the channel reports to the `Inbox` it was opened with. A frame's bytes not yet read
(`feed`: a stdio line) or a frame the transport already read at its edge (`frame`: a URL
body, depth-checked and decoded once, scrubbed of secrets); a message refused unread
(`dropped`); and a request the transport could not carry (`fault`: one of the four kinds
in `sidecar.errors`, never a made-up JSON-RPC frame). `gone` is done when nothing more
can come and `ended` says why, as a typed fault too; `stop` releases everything (never
raising). A channel whose frames are lines (a stdio child) is a `LineChannel` too, with
two shortcuts on a plain call's way: `line_sink` (a frame's bytes alone, no `Outgoing`
made) and `lines_to` (its lines read straight into the connection's `feed`, past the inbox). Which transport an entry opens is `sidecar.upstream.transports`; the
transports import this seam, never the other way round.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import msgspec

if TYPE_CHECKING:
    from sidecar.config import ServerConfig
    from sidecar.errors import UpstreamUnavailable
    from sidecar.wire import UpstreamFrame
    from sidecar.wire.salvage import DroppedFrame

__all__ = ["Channel", "ChannelOpener", "Inbox", "LineChannel", "Outgoing"]

RequestId = int | str


class Outgoing(msgspec.Struct):
    """One message on its way to the upstream: what it is, and its bytes (newline-ended).
    A struct, so making one per message runs no Python `__init__`."""

    frame: bytes
    id: RequestId | None
    method: str | None
    params: Any = None

    @property
    def is_request(self) -> bool:
        return self.id is not None and self.method is not None

    @property
    def is_barrier(self) -> bool:
        """Nothing after it goes before its answer's headers are in (the session id, mostly)."""
        return self.id is None or self.method in ("initialize", "server/discover")

    def param(self, key: str) -> Any:
        """One of the params' members, or None."""
        return self.params.get(key) if isinstance(self.params, dict) else None


class Inbox(Protocol):
    """Where a channel reports what comes up (the supervisor's, forwarding to the connection)."""

    def feed(self, line: bytes) -> None:
        """One frame's bytes, not yet read: the connection scans and decodes it."""
        ...

    def frame(self, frame: UpstreamFrame, size: int) -> None:
        """One frame the transport read at its edge (`size` bytes on the wire)."""
        ...

    def dropped(self, notice: DroppedFrame) -> None:
        """A message refused unread (over a cap, too deep), by its edges."""
        ...

    def fault(self, ident: RequestId, fault: UpstreamUnavailable) -> None:
        """The request `ident` could not be carried: it ends with this fault."""
        ...


class Channel(Protocol):
    @property
    def gone(self) -> asyncio.Future[None]: ...

    def send(self, message: Outgoing) -> None: ...

    async def stop(self) -> None: ...

    def ended(self) -> UpstreamUnavailable:
        """Why it ended (or would have, if asked early): its detail words, its kind."""
        ...

    def diagnostics(self) -> str:
        """Recent diagnostic text (a child's stderr tail); never shown to the engine."""
        ...


@runtime_checkable
class LineChannel(Protocol):
    """A transport whose frames are lines (a stdio child): a plain call's frame goes to
    `line_sink` as its bytes alone, and `lines_to` hands each line read from then on to
    `on_line` (its connection's `feed`). Asked once per connection (`isinstance`)."""

    line_sink: Callable[[bytes], None]

    def lines_to(self, on_line: Callable[[bytes], None]) -> None: ...


# How a supervisor opens its upstream's transport: `sidecar.upstream.transports.open_channel`
# in a running sidecar, in-memory fakes in the tests' harness (tests/harness).
ChannelOpener = Callable[["ServerConfig", Inbox], Awaitable[Channel]]
