"""Newline-delimited framing with a line cap and resync at the next newline.

A line over the cap is dropped whole, never buffered past the cap. When the owner asks
(`on_dropped`), the first and last `EDGE_BYTES` of each dropped line are kept and handed
over as a `DroppedFrame`, so the request it answered can still be ended (see `salvage`).
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import TYPE_CHECKING

from sidecar.wire.salvage import EDGE_BYTES, DroppedFrame

if TYPE_CHECKING:
    from sidecar.wire.outbox import Reading

__all__ = ["LineFramer", "DEFAULT_LINE_CAP", "DropSink", "each"]

# Well above the largest result the gate holds (64 MiB per upstream).
DEFAULT_LINE_CAP = 160 * 1024 * 1024

DropSink = Callable[[DroppedFrame], None]

# Runs an iterator to its end and keeps nothing (a deque with no room): `map(on_line,
# lines)` driven from C as a `for` loop would drive it (in order; an exception goes out),
# with no bytecode run per line.
each = collections.deque[None](maxlen=0).extend


class LineFramer:
    """Feeds bytes in, takes whole lines out.

    A line longer than `max_line` is dropped whole: bytes are discarded until the next
    newline, and `oversized` counts how many lines were lost that way. Blank lines are
    skipped. A trailing `\\r` is removed.
    """

    __slots__ = ("max_line", "oversized", "on_dropped", "_buffer", "_discarding", "_scanned",
                 "_head", "_tail", "_dropped_size", "_room")

    def __init__(self, max_line: int = DEFAULT_LINE_CAP, on_dropped: DropSink | None = None) -> None:
        self.max_line = max_line
        self.oversized = 0
        self.on_dropped = on_dropped
        self._buffer = bytearray()
        self._discarding = False
        self._scanned = 0
        self._head = self._tail = b""
        self._dropped_size = 0
        # The longest read that may take the whole-line way: the cap while nothing is
        # buffered or being discarded, else -1 (none may). One test for three on every
        # read; kept in step where those change (`_buffered`, `_whole_lines`).
        self._room = max_line

    def feed(self, data: bytes) -> list[bytes]:
        """Return every line completed by `data`, in order."""
        if len(data) > self._room:  # something buffered or discarded, or over the cap
            return self._buffered(data)
        if data.find(b"\n") == len(data) - 1:  # one whole line, as every read of a lone call is: no split
            line = data[:-1].rstrip(b"\r")  # the same bytes, not a copy, when it has no \r
            return [line] if line.strip() else []
        return self._whole_lines(data)

    def feed_each(self, data: bytes, on_line: Callable[[bytes], None]) -> None:
        """`feed`, each line handed to `on_line` in order: a read that is one whole line
        (every read of a lone call, on both pipes) with nothing buffered goes straight on,
        with no list and no second call."""
        size = len(data)
        if data.find(b"\n") == size - 1 and size <= self._room:
            line = data[:-1].rstrip(b"\r")  # the same bytes, not a copy, when it has no \r
            if line.strip():
                on_line(line)
            return
        for line in self.feed(data):
            on_line(line)

    def read(self, data: bytes, on_line: Callable[[bytes], None], reading: Reading) -> None:
        """`feed_each` as one read of a pipe (`reading`, `sidecar.wire.outbox.READING`):
        what is sent meanwhile leaves together at its end (a read handled inside another's
        leaves that to the outer one). A read that is one whole line with nothing buffered
        goes to `on_line` from here, with no call of `feed_each` (every read of a lone call,
        on both pipes)."""
        if reading.open:
            self.feed_each(data, on_line)
            return
        reading.open = True
        try:
            size = len(data)
            if data.find(b"\n") == size - 1 and size <= self._room:  # `feed_each`'s first way, inline
                line = data[:-1].rstrip(b"\r")
                if line.strip():
                    on_line(line)
            else:  # several lines (calls in flight together): each handed on from C
                each(map(on_line, self.feed(data)))
        finally:
            if reading.sent:
                reading.ended()
            else:  # `ended` with nothing to flush, inline: every lone call's read ends so
                reading.open = False
                reading.turn += 1

    def _buffered(self, data: bytes) -> list[bytes]:
        """Lines from what is buffered and `data`, a line at a time."""
        self._room = -1  # until it returns: a fault half-way leaves the buffered way, right in any state
        self._buffer += data
        lines: list[bytes] = []
        while True:
            newline = self._buffer.find(b"\n", self._scanned)
            if newline < 0:
                self._scanned = len(self._buffer)
                self._drop_if_oversized()
                self._room = -1 if self._buffer or self._discarding else self.max_line
                return lines
            with memoryview(self._buffer) as view:
                line = bytes(view[:newline])  # one copy, not a slice and then a copy
            if newline + 1 == len(self._buffer):
                self._buffer = bytearray()  # let a big line's buffer go at once
            else:
                del self._buffer[: newline + 1]
            self._scanned = 0
            if self._discarding:
                self._discarding = False
                self._end_drop(line)
                continue
            if len(line) > self.max_line:
                self.oversized += 1
                self._start_drop(line)
                self._end_drop(line)
                continue
            line = line.rstrip(b"\r")
            if line.strip():
                lines.append(line)

    def _whole_lines(self, data: bytes) -> list[bytes]:
        """Nothing was buffered and the read fits the cap, so no line in it can be over the
        cap: it is split once (a pipelined burst of many frames costs one pass, not one
        buffer shift per line); only the unfinished tail, its last part, is kept. With no
        `\r` in the read, the blank lines are left out by `filter` in C, with no bytecode
        run per line (every pipelined burst of compact frames)."""
        lines = data.split(b"\n")
        tail = lines.pop()  # the unfinished tail (b"" when the read ends a line)
        if tail:
            self._buffer += tail
            self._scanned = len(self._buffer)
            self._room = -1
        if b"\r" in data:
            return [line.rstrip(b"\r") for line in lines if line.strip()]
        return list(filter(bytes.strip, lines))

    def _drop_if_oversized(self) -> None:
        if len(self._buffer) > self.max_line:
            if not self._discarding:
                self.oversized += 1
                self._start_drop(bytes(self._buffer[:EDGE_BYTES]))
            self._discarding = True
            self._keep_tail(self._buffer)
            self._buffer.clear()
            self._scanned = 0

    def _start_drop(self, line: bytes) -> None:
        self._head, self._tail, self._dropped_size = line[:EDGE_BYTES], b"", 0

    def _keep_tail(self, part: bytes | bytearray) -> None:
        self._dropped_size += len(part)
        if self.on_dropped is not None:
            self._tail = (self._tail + bytes(part[-EDGE_BYTES:]))[-EDGE_BYTES:]

    def _end_drop(self, rest: bytes) -> None:
        """The dropped line ended (its last part is `rest`): tell the owner what was seen."""
        if self.on_dropped is None:
            return
        self._keep_tail(rest)
        notice = DroppedFrame(self._dropped_size, f"over the {self.max_line}-byte line cap",
                              self._head, self._tail.rstrip(b"\r"))
        self._head = self._tail = b""
        self._dropped_size = 0
        self.on_dropped(notice)

    @property
    def pending_bytes(self) -> int:
        return len(self._buffer)
