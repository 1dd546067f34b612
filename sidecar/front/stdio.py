"""The stdio front: newline-delimited JSON-RPC on the process's stdin and stdout.

Owns the two pipes. Reads are pushed straight into the dispatcher (no task per line),
which decodes each line once; the session's events are encoded here, one NDJSON line
each, and go to the stdout transport's buffer. Returns when stdin reaches EOF. A line
over the cap is dropped unread, and the request it was still gets its one answer, an
error under its id, when the line's first or last bytes show the id (`refuse_dropped`);
the lines after it are served as usual.

An engine that stops reading stdout cannot grow the sidecar: what the stdout buffer
holds decides whether a notification or relayed request still goes (`Shedding`), and
past the hard mark the reading of stdin pauses until the buffer drains, so the answers
still owed are only those to requests already read.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
from collections.abc import Callable

import msgspec

from sidecar.upstream.pipes import for_the_loop
from sidecar.wire import Answer, Event, FrameRejected, LineFramer, RequestId, encode_event, encode_notification
from sidecar.wire.events import ANSWER_HEAD, RESULT_KEY, AnswerResult
from sidecar.wire.jsonrpc import refuse_dropped
from sidecar.wire.salvage import DroppedFrame
from sidecar.wire.outbox import HARD_BYTES, Outbox, Shedding
from sidecar.wire.reader import LineReader

__all__ = ["serve_stdio", "open_stdout", "EngineStdout", "ENGINE_LINE_CAP"]

log = logging.getLogger(__name__)

ENGINE_LINE_CAP = 64 * 1024 * 1024
_encode = msgspec.json.encode
_Raw = msgspec.Raw


Refuse = Callable[[FrameRejected], None]


def _dropped_sink(on_refused: Refuse | None) -> Callable[[DroppedFrame], None] | None:
    """What hears of a line dropped over the cap: the request it carried is refused by id."""
    if on_refused is None:
        return None

    def dropped(frame: DroppedFrame) -> None:
        log.warning("a %d-byte line from the engine was dropped (%s)", frame.size, frame.why)
        refusal = refuse_dropped(frame)
        if refusal is not None:
            on_refused(refusal)

    return dropped


class _StdinProtocol(LineReader):
    """The engine's stdin, framed by itself: whole lines to `on_line` (`LineReader`)."""

    __slots__ = ("prefix", "closed")

    def __init__(self, on_line: Callable[[bytes], None], on_refused: Refuse | None = None,
                 line_cap: int = ENGINE_LINE_CAP, prefix: bytes = b"") -> None:
        LineReader.__init__(self, on_line, line_cap, _dropped_sink(on_refused))
        self.prefix = prefix  # read before the loop ran (the early initialize's rest): framed first
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        prefix, self.prefix = self.prefix, b""
        if prefix:
            self.data_received(prefix)

    def eof_received(self) -> bool:
        for line in self.feed(b"\n"):  # a last request without its newline is still a request
            self.on_line(line)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


class StdoutWriter:
    """Writes frames to stdout; after the engine closes its end, frames are dropped."""

    def __init__(self, transport: asyncio.WriteTransport) -> None:
        self.transport = transport

    def __call__(self, frame: bytes) -> None:
        if not self.transport.is_closing():
            self.transport.write(frame)


class _StdoutFlow(asyncio.Protocol):
    """Stdout's flow control: past the high mark the engine's stdin stops being read."""

    def __init__(self) -> None:
        self.readers: list[asyncio.ReadTransport] = []
        self.paused = False
        self.pauses = 0
        self.on_resume: Callable[[], None] = lambda: None

    def pause_writing(self) -> None:
        self.paused = True
        self.pauses += 1
        for reader in self.readers:
            reader.pause_reading()
        (log.warning if self.pauses == 1 else log.info)(
            "the engine is not reading stdout: reading its requests is paused (%d times so far)", self.pauses)

    def resume_writing(self) -> None:
        self.paused = False
        self.on_resume()
        for reader in self.readers:
            if not reader.is_closing():
                reader.resume_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        self.resume_writing()  # nobody will read what is left: let stdin reach its EOF


class EngineStdout:
    """What the session writes to: every event, encoded here as one NDJSON line, and
    whether a notification may go now."""

    def __init__(self, write: Callable[[bytes], None], buffered: Callable[[], int],
                 flow: _StdoutFlow | None = None) -> None:
        self.write = write
        self.buffered = buffered
        self.flow = flow
        self.shedding = Shedding("the engine on stdout")
        self.owed: set[str] = set()  # list changes dropped: said once stdout drains
        if flow is not None:
            flow.on_resume = self._say_owed

    def __call__(self, frame: bytes) -> None:
        self.write(frame)

    def emit(self, event: Event) -> None:
        self.write(encode_event(event))

    def answer(self, ident: RequestId, result: AnswerResult) -> None:
        """`emit(Answer(ident, result))`: an upstream's result (Raw) spliced under the id as
        `encode_event` splices it, with no event made."""
        if type(result) is _Raw:
            self.write(b"".join((ANSWER_HEAD, _encode(ident), RESULT_KEY, result, b"}\n")))
        else:
            self.write(encode_event(Answer(ident, result)))

    def admits(self, method: str | None) -> bool:
        if self.shedding.admits(method, self.buffered()):
            return True
        if method is not None and method.endswith("/list_changed"):
            self.owed.add(method)
        return False

    def _say_owed(self) -> None:
        """A change the engine missed while it was not reading is news it still needs."""
        owed, self.owed = sorted(self.owed), set()
        for method in owed:
            self.write(encode_notification(method))

    async def flushed(self, seconds: float) -> bool:
        """Wait (at most `seconds`) until everything written has left for the engine: the
        last answers at shutdown must not die in a buffer. False when time ran out."""
        try:
            async with asyncio.timeout(seconds):
                while self.buffered():
                    await asyncio.sleep(0.005)  # the transport tells of no "empty" moment
        except TimeoutError:
            return False
        return True

    def hold(self, reader: asyncio.ReadTransport) -> None:
        """Pause `reader` while stdout is over its high mark."""
        if self.flow is not None:
            self.flow.readers.append(reader)
            if self.flow.paused:
                reader.pause_reading()


def _is_stream(fd: int) -> bool:
    """Pipes, sockets and terminals get the event loop; regular files and other character
    devices (`/dev/null`: the loop's poller refuses it, and uvloop aborts the process on
    that) are read and written directly."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and os.isatty(fd))


def _write_all(fd: int, frame: bytes) -> None:
    view = memoryview(frame)
    while view:
        view = view[os.write(fd, view):]


async def open_stdout() -> EngineStdout:
    loop = asyncio.get_running_loop()
    if not _is_stream(sys.stdout.fileno()):
        fd = sys.stdout.fileno()
        return EngineStdout(lambda frame: _write_all(fd, frame), lambda: 0)
    # A duplicate of fd 1, so closing the transport never closes the real stdout early.
    # Handed to the transport alone (`for_the_loop`: uvloop would close its number twice).
    pipe = for_the_loop(loop, os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0))
    transport, flow = await loop.connect_write_pipe(_StdoutFlow, pipe)
    transport.set_write_buffer_limits(high=HARD_BYTES, low=HARD_BYTES // 4)
    outbox = Outbox(StdoutWriter(transport), loop)
    outbox.to(transport)  # StdoutWriter's rule, without its call per frame
    return EngineStdout(outbox, lambda: transport.get_write_buffer_size() + outbox.queued_bytes, flow)


async def serve_stdio(on_line: Callable[[bytes], None], stdout: EngineStdout | None = None,
                      on_refused: Refuse | None = None, prefix: bytes = b"") -> None:
    """Feed stdin lines to `on_line` until EOF (paused while `stdout` is too full); a line
    dropped over the cap goes to `on_refused` as the refusal of its request. `prefix`: bytes
    of stdin read before (`sidecar.wire.hello`), framed ahead of the rest."""
    loop = asyncio.get_running_loop()
    cap = ENGINE_LINE_CAP
    if not _is_stream(sys.stdin.fileno()):
        await _serve_file(sys.stdin.fileno(), on_line, on_refused, cap, prefix)
        return
    pipe = for_the_loop(loop, os.fdopen(os.dup(sys.stdin.fileno()), "rb", buffering=0))  # as stdout's (above)
    transport, protocol = await loop.connect_read_pipe(lambda: _StdinProtocol(on_line, on_refused, cap, prefix), pipe)
    if stdout is not None:
        stdout.hold(transport)
    await protocol.closed
    if protocol.oversized:
        log.warning("%d oversized lines from the engine were dropped", protocol.oversized)


async def _serve_file(fd: int, on_line: Callable[[bytes], None], on_refused: Refuse | None, cap: int,
                      prefix: bytes = b"") -> None:
    framer = LineFramer(cap, _dropped_sink(on_refused))
    for line in framer.feed(prefix):
        on_line(line)
    while chunk := await asyncio.to_thread(os.read, fd, 1 << 16):
        for line in framer.feed(chunk):
            on_line(line)
    for line in framer.feed(b"\n"):
        on_line(line)
