"""One MCP client connection to an upstream, whatever carries its bytes.

Owns the upstream side of id routing (its own counter, RELIABILITY rule 1), progress
tokens, cancellation, and the split of incoming frames into answers, notifications and
requests. Refuses: frames that are not JSON-RPC (skipped and counted), answers to ids it
never sent or already settled (dropped and counted), frames nested past the depth limit
or over a size cap. A refused frame that was an answer still ends its request: with an
error naming the limit (`dropped`), so every request sent ends exactly once.

Owns, too, the one place a transport's fault becomes what the waiting caller raises:
`fault` (one request), `lost` (every request, the transport gone), a refused answer and
a passed deadline all end in `sidecar.errors.upstream_fault`'s words, whatever carried
the bytes. Each message goes down encoded once, as an `Outgoing`; each frame comes up
scanned for depth at most once (not at all when too short to nest past the limit) and
decoded once (`feed`), or already read by its transport (`frame`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Protocol

import msgspec

from sidecar.errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    CallCancelled,
    TimedOut,
    UpstreamError,
    UpstreamUnavailable,
    refused_unread,
    upstream_fault,
)
from sidecar.upstream.channel import LineChannel, Outgoing
from sidecar.wire import (
    TOO_DEEP,
    IdAllocator,
    UpstreamFrame,
    decode_upstream_frame,
    encode_error,
    encode_notification,
    encode_request,
    encode_result,
)
from sidecar.wire.depth import MAX_DEPTH, too_deep
from sidecar.wire.requests import PROGRESS_TOKEN, progress_token
from sidecar.wire.salvage import EDGE_BYTES, DroppedFrame, salvage

__all__ = ["Connection", "Transport", "PeerHandler", "ProgressSink", "Waiter"]

log = logging.getLogger(__name__)

DROPS_LOGGED = 10  # per connection, then one line in every DROPS_LOG_EVERY
DROPS_LOG_EVERY = 1000

ProgressSink = Callable[[dict[str, Any]], None]

_EMPTY_RESULT = msgspec.Raw(b"{}")
_upstream_decoder = msgspec.json.Decoder(UpstreamFrame)
_encode_frame = msgspec.json.encode  # what `encode_request` writes with
_CALL_HEAD, _CALL_PARAMS = b'{"jsonrpc":"2.0","id":', b',"method":"tools/call","params":'


class Transport(Protocol):
    """Carries messages to the upstream; its reader side reports to the connection (an Inbox)."""

    def send(self, message: Outgoing) -> None: ...


class PeerHandler(Protocol):
    """What the connection hands upward: notifications and requests from the upstream."""

    def upstream_notification(self, conn: Connection, frame: UpstreamFrame) -> None: ...

    def upstream_request(self, conn: Connection, frame: UpstreamFrame) -> None: ...


class Waiter(Protocol):
    """What waits for one request's answer: a future, or anything that ends as one does
    (a plain call's `sidecar.gate.inline.Started` ends itself there and then, no turn of
    the loop and no future in between). The connection sets it once: an answer, or a
    fault; `exception` is asked right after a fault is set (a future's is consumed so)."""

    def done(self) -> bool: ...

    def set_result(self, result: UpstreamFrame, /) -> None: ...

    def set_exception(self, exception: BaseException, /) -> None: ...

    def exception(self) -> BaseException | None: ...


class _Pending(msgspec.Struct):
    """A request waiting for its answer (a struct: no Python `__init__` per request)."""

    future: Waiter
    progress_token: int | None
    is_call: bool  # a tools/call: its loss is said to be not retried (a handshake's is not a call)
    ends_once: bool = False  # its waiter ignores a second ending itself (`send_call`'s): not asked `done`


class Connection:
    """Requests out with fresh ids; answers matched back; the rest handed to `handler`."""

    def __init__(self, alias: str, transport: Transport, handler: PeerHandler) -> None:
        self.alias = alias
        self.transport = transport
        # A stdio child takes a frame's bytes alone (`LineChannel.line_sink`): a plain call
        # goes there with no `Outgoing` made and no `send` in between; others take `send`.
        self._line_sink: Callable[[bytes], None] | None = \
            transport.line_sink if isinstance(transport, LineChannel) else None
        self.handler = handler
        self.closed_reason: str | None = None  # the detail words of why it closed
        self._closed_kind: type[UpstreamUnavailable] = UpstreamUnavailable
        self.skipped_lines = 0
        self.stray_answers = 0
        self.dropped_frames = 0
        self.repaired_frames = 0  # frames whose bad text was replaced (counted value by value below)
        self.repaired_values = 0
        self._ids: IdAllocator[_Pending] = IdAllocator()
        # the allocator's table, read directly on an answer's way (any decoded id may be asked)
        self._waiting: dict[Any, _Pending] = self._ids.waiting
        self._next_id = self._ids.next_id  # and its counter, on a plain call's way
        self._progress: dict[int, ProgressSink] = {}
        self._next_token = 0
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop its transport runs on

    def _bind_loop(self) -> asyncio.AbstractEventLoop:
        """The running loop, asked once: on 3.11 each ask is a getpid() system call."""
        self._loop = asyncio.get_running_loop()
        return self._loop

    # -- outgoing -------------------------------------------------------------------

    def start_request(
        self, method: str, params: Any, progress: ProgressSink | None = None
    ) -> tuple[int, asyncio.Future[UpstreamFrame]]:
        """Send a request now; returns its upstream id and the future of its answer."""
        if self.closed_reason is not None:
            raise upstream_fault(self._closed_kind, self.alias, self.closed_reason)
        loop = self._loop or self._bind_loop()
        future: asyncio.Future[UpstreamFrame] = loop.create_future()
        token = None
        if progress is not None:
            params, token = self._with_progress_token(params, progress)
        ident = self._ids.allocate(_Pending(future, token, method == "tools/call"))
        self.transport.send(Outgoing(encode_request(ident, method, params), ident, method, params))
        return ident, future

    def send_call(self, params: dict[str, Any], waiter: Waiter) -> int:
        """`start_request` for a `tools/call` with no progress sink, on a connection its
        caller found open (`Upstream.ready_connection`), answered to `waiter`: a plain
        call's (`sidecar.gate.inline`), which ignores an ending after its first itself (so
        an answer sets it without asking `done`). Returns its upstream id."""
        ident = self._next_id()  # `IdAllocator.allocate` and `encode_request`, inline
        self._waiting[ident] = _Pending(waiter, None, True, True)
        # `encode_request`'s bytes, spliced: no envelope dict built and encoded per call
        frame = b"".join((_CALL_HEAD, _encode_frame(ident), _CALL_PARAMS, _encode_frame(params), b"}\n"))
        line_sink = self._line_sink
        if line_sink is not None:
            line_sink(frame)
        else:
            self.transport.send(Outgoing(frame, ident, "tools/call", params))
        return ident

    async def request(
        self,
        method: str,
        params: Any = None,
        progress: ProgressSink | None = None,
        on_sent: Callable[[Connection, int], None] | None = None,
        deadline: float | None = None,
    ) -> msgspec.Raw:
        """Send a request and wait for its result (errors raised as UpstreamError).

        `on_sent` learns the upstream id (so a cancel can follow it); past `deadline`
        seconds the upstream is told to stop and the wait ends with UpstreamUnavailable;
        a wait cancelled from outside tells the upstream to stop as well."""
        ident, future = self.start_request(method, params, progress)
        if on_sent is not None:
            on_sent(self, ident)
        try:
            if deadline is None:
                frame = await future
            else:
                async with asyncio.timeout(deadline):
                    frame = await future
        except TimeoutError:
            self.cancel(ident, "the sidecar's deadline for this call passed")
            raise upstream_fault(TimedOut, self.alias, f"timed out after {deadline:g}s",
                                 is_call=method == "tools/call") from None
        except asyncio.CancelledError:  # whoever waited is gone (its session closed): the upstream stops too
            self.cancel(ident, "the sidecar stopped waiting for this request")
            raise
        except BaseException:
            self.forget(ident)
            raise
        # An answer came: `_answer` already released its id and progress token (only it
        # sets a result), so there is nothing to forget on this, the common, path.
        if frame.error:
            raise upstream_error(frame.error)
        return frame.result if frame.result else _EMPTY_RESULT

    def _with_progress_token(self, params: Any, sink: ProgressSink) -> tuple[Any, int]:
        self._next_token += 1
        token = self._next_token
        self._progress[token] = sink
        params = dict(params or {})
        meta = dict(params.get("_meta") or {})
        meta[PROGRESS_TOKEN] = token
        params["_meta"] = meta
        return params, token

    def waiter(self, ident: int) -> Waiter | None:
        """What waits for the answer to request `ident`, while it is in flight."""
        pending = self._waiting.get(ident)
        return pending.future if pending is not None else None

    def request_of_token(self, token: object) -> int | None:
        """The id of the request in flight that was sent with progress token `token`."""
        if type(token) is not int:
            return None
        return next((ident for ident, pending in self._ids.items() if pending.progress_token == token), None)

    def forget(self, ident: int) -> None:
        """Stop waiting for `ident` (done or abandoned); a late answer is then dropped."""
        pending = self._ids.release(ident)
        if pending is not None:
            self._settle(pending)

    def cancel(self, ident: int, reason: str = "cancelled by the client") -> None:
        """Tell the upstream to stop `ident`, and drop whatever answer still comes."""
        pending = self._ids.release(ident)
        if pending is None:
            return
        self._settle(pending)
        if not pending.future.done():
            pending.future.set_exception(CallCancelled("cancelled by the client"))
            pending.future.exception()
        self.notify("notifications/cancelled", {"requestId": ident, "reason": reason})

    def _settle(self, pending: _Pending) -> None:
        if pending.progress_token is not None:
            self._progress.pop(pending.progress_token, None)

    def notify(self, method: str, params: Any = None) -> None:
        if self.closed_reason is None:
            self.transport.send(Outgoing(encode_notification(method, params), None, method, params))

    def respond(self, ident: int | str, result: Any) -> None:
        if self.closed_reason is None:
            self.transport.send(Outgoing(encode_result(ident, result), ident, None))

    def respond_error(self, ident: int | str, code: int, message: str) -> None:
        if self.closed_reason is None:
            self.transport.send(Outgoing(encode_error(ident, code, message), ident, None))

    # -- incoming -------------------------------------------------------------------

    def feed(self, line: bytes) -> None:
        """One frame's bytes: scanned for depth at most once, decoded once (repaired if it
        must be). A frame of at most `MAX_DEPTH` bytes is not scanned: nesting one level
        takes an opening bracket, a byte, so a text that short cannot nest past the limit
        (every plain call's answer of a few hundred bytes skips the scan's call)."""
        if len(line) > MAX_DEPTH and too_deep(line):
            self.dropped(DroppedFrame(len(line), TOO_DEEP, line[:EDGE_BYTES], line[-EDGE_BYTES:]))
            return
        try:  # `decode_upstream_frame`'s first try, inline: every answer comes this way
            frame: UpstreamFrame | None = _upstream_decoder.decode(line)
        except (msgspec.DecodeError, RecursionError):
            frame = decode_upstream_frame(line) or self._repaired(line)
        if frame is None:
            self.skipped_lines += 1
        elif frame.method is None:  # an answer, the most frequent frame: `_answer`'s body, inline (kept in step)
            pending = self._waiting.pop(frame.id, None)
            if pending is None:
                self.stray_answers += 1
                return
            if pending.progress_token is not None:
                self._progress.pop(pending.progress_token, None)
            if pending.ends_once or not pending.future.done():
                pending.future.set_result(frame)
        else:
            self.frame(frame, len(line))

    def frame(self, frame: UpstreamFrame, size: int = 0) -> None:
        """One frame already read (here, or at a URL transport's edge): routed by its kind."""
        if frame.method is None:
            self._answer(frame)
        elif frame.id is None:
            self._notification(frame)
        else:
            self.handler.upstream_request(self, frame)

    def _answer(self, frame: UpstreamFrame) -> None:
        # `IdAllocator.release`, inline (and this body in `feed`). The id is as decoded
        # (`UpstreamFrame.id`: an int, a string or None; msgspec refuses a float or a boolean
        # there), so only an int can equal a key of ours: a "1" or a None finds nothing.
        pending = self._waiting.pop(frame.id, None)
        if pending is None:
            self.stray_answers += 1
            return
        if pending.progress_token is not None:
            self._progress.pop(pending.progress_token, None)
        if pending.ends_once or not pending.future.done():
            pending.future.set_result(frame)

    def _notification(self, frame: UpstreamFrame) -> None:
        if frame.method == "notifications/progress":
            self._progress_notification(frame)
        else:
            self.handler.upstream_notification(self, frame)

    def _progress_notification(self, frame: UpstreamFrame) -> None:
        try:
            params = msgspec.json.decode(frame.params) if frame.params else {}
        except msgspec.DecodeError:
            return
        if not isinstance(params, dict):
            return
        token = progress_token(params)
        sink = self._progress.get(token) if type(token) is int else None
        if sink is not None:
            sink(params)

    def _repaired(self, line: bytes) -> UpstreamFrame | None:
        """The slow path for a frame msgspec refused: its bad values replaced, the rest kept."""
        from sidecar.wire.repair import repair_frame  # loaded by the first frame refused, not at start

        repair = repair_frame(line) if line.lstrip()[:1] == b"{" else None
        frame = decode_upstream_frame(repair.frame) if repair is not None else None
        if frame is None or repair is None or frame.jsonrpc != "2.0":
            return None  # not a JSON-RPC message even so: skipped, like any stray line
        self.repaired_frames += 1
        self.repaired_values += repair.values
        what = f"answer to id {frame.id!r}" if frame.method is None else repr(frame.method)
        log.log(logging.WARNING if self.repaired_frames == 1 else logging.DEBUG,
                "upstream '%s' sent text that is not valid (%s, %d in all) in its %s; replaced, the rest kept "
                "(%d frames repaired so far; the first is logged as a warning)",
                self.alias, ", ".join(repair.reasons), repair.values, what, self.repaired_frames)
        return frame

    def dropped(self, notice: DroppedFrame) -> None:
        """A frame that was refused unread: end what it answered, or answer what it asked.

        The id is read from the frame's edges. A dropped answer whose id cannot be read
        fails every request then in flight: one of them lost its answer, none can be told
        apart, and a wait with no end is worse than an error."""
        self.dropped_frames += 1
        found = salvage(notice.head, notice.tail)
        words = f"{notice.size} bytes, {notice.why}"
        self._log_drop(found.id, found.method, words)
        if found.method is not None:
            if found.id is not None:
                self.respond_error(found.id, INVALID_REQUEST, f"the request was refused unread: {words}")
            return
        refused = refused_unread(notice.size, notice.why)
        if found.id is not None:
            pending = self._ids.release(found.id)
            waiting = [pending] if pending is not None else []
        else:
            waiting = self._ids.drain() if notice.may_answer else []
        for pending in waiting:
            self._end(pending, refused)

    def fault(self, ident: int | str, fault: UpstreamUnavailable) -> None:
        """The transport could not carry request `ident`: it ends with `fault`, in its kind."""
        pending = self._ids.release(ident)
        if pending is not None:
            self._end(pending, fault)

    def _end(self, pending: _Pending, fault: UpstreamUnavailable) -> None:
        """The one place a fault becomes what the waiting caller raises."""
        self._settle(pending)
        if not pending.future.done():
            pending.future.set_exception(upstream_fault(type(fault), self.alias, fault.detail, is_call=pending.is_call))
            pending.future.exception()  # consumed here: the waiter may be gone

    def _log_drop(self, ident: object, method: str | None, words: str) -> None:
        count = self.dropped_frames
        if count <= DROPS_LOGGED or count % DROPS_LOG_EVERY == 0:
            what = f"a {method!r} message" if method else ("the answer to id " + repr(ident) if ident is not None
                                                          else "a frame with no readable id")
            log.warning("upstream '%s': dropped %s (%s; %d dropped so far)", self.alias, what, words, count)

    def lost(self, fault: UpstreamUnavailable) -> None:
        """The transport is gone (`fault` says why): every waiting request fails now, clearly."""
        if self.closed_reason is not None:
            return
        self.closed_reason, self._closed_kind = fault.detail, type(fault)
        self._progress.clear()
        for pending in self._ids.drain():
            self._end(pending, fault)

    @property
    def in_flight(self) -> int:
        return len(self._ids)


def result_of(frame: UpstreamFrame) -> msgspec.Raw:
    """The result of an answer, or the upstream's own error raised as UpstreamError."""
    if frame.error:
        raise upstream_error(frame.error)
    return frame.result if frame.result else msgspec.Raw(b"{}")


def upstream_error(raw: msgspec.Raw) -> UpstreamError:
    try:
        error = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        error = None
    if not isinstance(error, dict):
        return UpstreamError("the upstream answered with a malformed error")
    code = error.get("code")
    message = error.get("message")
    return UpstreamError(
        message if isinstance(message, str) else "the upstream reported an error",
        code=code if type(code) is int else INTERNAL_ERROR,
        data=error.get("data"),
        raw=bytes(raw),
    )
