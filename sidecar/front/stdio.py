"""The stdio front: newline-delimited JSON-RPC on the process's stdin and stdout.

Owns the two pipes. Reads are pushed straight into the dispatcher (no task per line);
writes go to the stdout transport's buffer. Returns when stdin reaches EOF.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
from collections.abc import Callable

from sidecar.wire import LineFramer, Outbox

__all__ = ["serve_stdio", "ENGINE_LINE_CAP"]

log = logging.getLogger(__name__)

ENGINE_LINE_CAP = 64 * 1024 * 1024


class _StdinProtocol(asyncio.Protocol):
    def __init__(self, on_line: Callable[[bytes], None]) -> None:
        self.framer = LineFramer(ENGINE_LINE_CAP)
        self.on_line = on_line
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        for line in self.framer.feed(data):
            self.on_line(line)

    def eof_received(self) -> bool:
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


def _is_stream(fd: int) -> bool:
    """Pipes, sockets and terminals get the event loop; regular files are read and written directly."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


def _write_all(fd: int, frame: bytes) -> None:
    view = memoryview(frame)
    while view:
        view = view[os.write(fd, view):]


async def open_stdout() -> Callable[[bytes], None]:
    loop = asyncio.get_running_loop()
    if not _is_stream(sys.stdout.fileno()):
        fd = sys.stdout.fileno()
        return lambda frame: _write_all(fd, frame)
    # A duplicate of fd 1, so closing the transport never closes the real stdout early.
    pipe = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    transport, _ = await loop.connect_write_pipe(asyncio.Protocol, pipe)
    return Outbox(StdoutWriter(transport), loop)


async def serve_stdio(on_line: Callable[[bytes], None]) -> None:
    """Feed stdin lines to `on_line` until EOF."""
    loop = asyncio.get_running_loop()
    if not _is_stream(sys.stdin.fileno()):
        await _serve_file(sys.stdin.fileno(), on_line)
        return
    pipe = os.fdopen(os.dup(sys.stdin.fileno()), "rb", buffering=0)
    _, protocol = await loop.connect_read_pipe(lambda: _StdinProtocol(on_line), pipe)
    await protocol.closed
    if protocol.framer.oversized:
        log.warning("%d oversized lines from the engine were dropped", protocol.framer.oversized)


async def _serve_file(fd: int, on_line: Callable[[bytes], None]) -> None:
    framer = LineFramer(ENGINE_LINE_CAP)
    while chunk := await asyncio.to_thread(os.read, fd, 1 << 16):
        for line in framer.feed(chunk):
            on_line(line)
    for line in framer.feed(b"\n"):
        on_line(line)
