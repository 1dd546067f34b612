"""Stdio children: frame stdout, keep stderr short, notice the exit, and shut down in
order (close stdin, wait, SIGTERM, SIGKILL) so no child is left behind.

Owns a started process (see `sidecar.upstream.spawn`), its pipes and its process group.
The exit is watched with a pidfd where the kernel has them (a thread waits otherwise).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import signal
from collections.abc import Callable
from typing import TYPE_CHECKING

from sidecar.config import ServerConfig
from sidecar.errors import UpstreamUnavailable
from sidecar.upstream.channel import Outgoing
from sidecar.upstream.greeting import Greeting
from sidecar.upstream.pipes import for_the_loop
from sidecar.upstream.spawn import start_process, stop_process, take_early
from sidecar.wire import Outbox
from sidecar.wire.framing import DropSink
from sidecar.wire.reader import LineReader

if TYPE_CHECKING:
    from sidecar.upstream.spawn import Process

__all__ = ["ChildProcess", "spawn_child", "adopt"]

log = logging.getLogger(__name__)

STDERR_KEEP = 64 * 1024
EXIT_DRAIN_SECONDS = 0.2


class _Lines(LineReader):
    """The child's stdout, framed by itself: whole lines to `on_line` (frames sent from a
    read leave together at its end); its end resolves `closed`."""

    __slots__ = ("closed",)

    def __init__(self, on_line: Callable[[bytes], None], max_line: int, on_dropped: DropSink | None,
                 closed: asyncio.Future[None]) -> None:
        LineReader.__init__(self, on_line, max_line, on_dropped)
        self.closed = closed

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


class _StderrTail(asyncio.Protocol):
    """The last STDERR_KEEP bytes of the child's stderr, for diagnostics only."""

    def __init__(self) -> None:
        self.chunks: collections.deque[bytes] = collections.deque()
        self.size = 0
        self.ended = asyncio.Event()  # the pipe closed: every byte the child wrote is in

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data[-STDERR_KEEP:])
        self.size += len(self.chunks[-1])
        while self.size > STDERR_KEEP and len(self.chunks) > 1:
            self.size -= len(self.chunks.popleft())

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended.set()


class ChildProcess:
    """A running stdio upstream (a Channel); messages go in, lines come out through `on_line`."""

    def __init__(self, popen: Process, loop: asyncio.AbstractEventLoop) -> None:
        self._popen = popen
        self.pid = popen.pid
        self.exited: asyncio.Future[None] = loop.create_future()
        # Gone: stdout closed, or the process exited and a short drain time passed (a
        # grandchild may hold stdout open after the child itself died).
        self.gone: asyncio.Future[None] = loop.create_future()
        self._stdin: asyncio.WriteTransport | None = None
        self._transports: list[asyncio.BaseTransport] = []
        self._stderr = _StderrTail()
        self._outbox = Outbox(self._write_now, loop)
        self.line_sink: Callable[[bytes], None] = self._outbox  # `send`, given the bytes alone (a plain call's)
        self._lines: _Lines | None = None  # its stdout's reader, once adopted
        self.greeting: Greeting | None = None  # what was said before it was adopted (taken once by its supervisor)

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    def diagnostics(self) -> str:
        """The tail of the child's stderr (kept for logs, never sent to the engine)."""
        return b"".join(self._stderr.chunks).decode("utf-8", "replace")

    async def stderr_ended(self) -> None:
        """Until the child's stderr pipe closes (bound it: a grandchild may hold it open)."""
        await self._stderr.ended.wait()

    def describe_end(self) -> str:
        code = self.returncode
        return "stopped" if code is None else f"stopped (exit code {code})"

    def ended(self) -> UpstreamUnavailable:
        return UpstreamUnavailable(self.describe_end())

    def send(self, message: Outgoing) -> None:
        """The message's bytes as the connection encoded them: a stdio frame is one line."""
        self._outbox(message.frame)

    def lines_to(self, on_line: Callable[[bytes], None]) -> None:
        """Hand each line its stdout brings from now on to `on_line` (its connection's
        `feed`, straight from the read: no inbox's call in between)."""
        if self._lines is not None:
            self._lines.on_line = on_line

    def _write_now(self, data: bytes) -> None:
        stdin = self._stdin
        if stdin is not None and not stdin.is_closing():
            stdin.write(data)

    def _set_gone(self, _: object = None) -> None:
        if not self.gone.done():
            self.gone.set_result(None)

    def _reaped(self) -> None:
        if self._popen.poll() is not None and not self.exited.done():
            self.exited.set_result(None)
            self.exited.get_loop().call_later(EXIT_DRAIN_SECONDS, self._set_gone)

    async def stop(self, grace: float = 2.0) -> None:
        """Close stdin, wait; SIGTERM the group, wait; SIGKILL the group. Never raises."""
        if self._stdin is not None:
            self._stdin.close()
        for sig in (None, signal.SIGTERM, signal.SIGKILL):
            if sig is not None:
                self._signal_group(sig)
            try:
                await asyncio.wait_for(asyncio.shield(self.exited), grace)
                break
            except asyncio.TimeoutError:
                continue
        self._signal_group(signal.SIGKILL)  # stray grandchildren of the group go too
        for transport in self._transports:
            transport.close()

    def _signal_group(self, sig: int) -> None:
        try:
            os.killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


async def adopt(popen: Process, on_line: Callable[[bytes], None], max_line: int,
                on_dropped: DropSink | None = None, tail: bytes = b"") -> ChildProcess:
    """Connect a started process's pipes to the event loop and watch for its exit (`tail`:
    the start of a line already read from its stdout, by its greeting)."""
    loop = asyncio.get_running_loop()
    child = ChildProcess(popen, loop)
    assert popen.stdin and popen.stdout and popen.stderr
    stdout_closed: asyncio.Future[None] = loop.create_future()
    stdout_closed.add_done_callback(child._set_gone)
    lines = child._lines = _Lines(on_line, max_line, on_dropped, stdout_closed)
    lines.feed(tail)  # no newline in it: held until the rest of its line comes
    # Each pipe goes to its transport alone, which closes it once (`for_the_loop`: uvloop
    # would otherwise close its number twice, the second time maybe another thread's file).
    # One at a time: should a connection fail, the pipes not yet handed over are still
    # the process's, and the caller's `stop_process` closes them.
    out, _ = await loop.connect_read_pipe(lambda: lines, for_the_loop(loop, popen.stdout))
    err, _ = await loop.connect_read_pipe(lambda: child._stderr, for_the_loop(loop, popen.stderr))
    stdin, _ = await loop.connect_write_pipe(asyncio.Protocol, for_the_loop(loop, popen.stdin))
    child._stdin = stdin
    child._outbox.to(stdin)  # `_write_now`'s rule, without its call per frame
    child._transports = [stdin, out, err]
    _watch_exit(child, popen, loop)
    return child


def _watch_exit(child: ChildProcess, popen: Process, loop: asyncio.AbstractEventLoop) -> None:
    try:
        pidfd = os.pidfd_open(popen.pid)
    except (AttributeError, OSError):  # no pidfd: a thread waits for the exit instead
        loop.run_in_executor(None, popen.wait).add_done_callback(lambda _: child._reaped())
        return

    def exited() -> None:
        loop.remove_reader(pidfd)
        os.close(pidfd)
        child._reaped()

    loop.add_reader(pidfd, exited)


async def spawn_child(server: ServerConfig, on_line: Callable[[bytes], None], max_line: int,
                      on_dropped: DropSink | None = None) -> ChildProcess:
    """The process started early for this entry (its greeting done), or a new one; OSError
    if it cannot start. An early process whose greeting cannot be handed over is replaced."""
    early = take_early(server)
    popen, greeting = early if early is not None else (start_process(server), None)
    try:
        if greeting is not None:
            if not greeting.finished(0):  # still talking to the upstream: wait without blocking the loop
                await _greeting_finished(greeting)
            if not _handed_over(greeting, max_line):
                stop_process(popen)
                popen, greeting = start_process(server), None
        child = await adopt(popen, on_line, max_line, on_dropped, greeting.tail if greeting is not None else b"")
    except BaseException:  # cancelled (or failed) before anyone owns it: it must not linger
        stop_process(popen, greeting)  # its greeting may still be reading: let it finish first
        raise
    child.greeting = greeting
    return child


async def _greeting_finished(greeting: Greeting) -> None:
    """Until `greeting`'s thread has stopped reading: woken by that thread as it stops."""
    loop = asyncio.get_running_loop()
    over: asyncio.Future[None] = loop.create_future()

    def wake() -> None:  # in the greeting's thread
        try:
            loop.call_soon_threadsafe(_settle, over)
        except RuntimeError:  # the loop closed meanwhile (its start cancelled): nobody waits
            pass

    greeting.when_finished(wake)
    await over


def _settle(over: asyncio.Future[None]) -> None:
    if not over.done():
        over.set_result(None)


def _handed_over(greeting: Greeting, max_line: int) -> bool:
    """A greeting the supervisor can go on from: usable, and every line it read within
    this server's line cap (an early entry may not set one, but keep the rule in one place)."""
    lines = (greeting.initialize or b"", greeting.tools or b"", *greeting.replay)
    return greeting.usable and all(len(line) <= max_line for line in lines)


