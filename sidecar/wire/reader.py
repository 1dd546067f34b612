"""A pipe's reading protocol that is its own line framer.

`LineReader.data_received` is `LineFramer.read` with the reader's own `on_line`: the read
goes from the loop's callback to the framing with no protocol method in between (the
engine's stdin and each stdio child's stdout, both ways of every call). uvloop binds a
protocol's `data_received` once, when the pipe connects, so the lines are redirected by
setting `on_line`, which each read looks up again (`ChildProcess.lines_to`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from sidecar.wire.framing import DEFAULT_LINE_CAP, DropSink, LineFramer, each
from sidecar.wire.outbox import READING

__all__ = ["LineReader"]


class LineReader(LineFramer, asyncio.Protocol):
    """Whole lines of what the pipe brings, each to `on_line`, in order; frames sent
    meanwhile leave together at the read's end (`sidecar.wire.outbox.READING`)."""

    __slots__ = ("on_line",)

    def __init__(self, on_line: Callable[[bytes], None], max_line: int = DEFAULT_LINE_CAP,
                 on_dropped: DropSink | None = None) -> None:
        LineFramer.__init__(self, max_line, on_dropped)
        self.on_line = on_line

    def data_received(self, data: bytes) -> None:
        """`read(data, self.on_line, READING)`, inline (its body, kept in step with it)."""
        reading = READING
        if reading.open:
            self.feed_each(data, self.on_line)
            return
        reading.open = True
        try:
            size = len(data)
            if data.find(b"\n") == size - 1 and size <= self._room:  # one whole line, nothing buffered: every lone call's read
                line = data[:-1].rstrip(b"\r")
                if line.strip():
                    self.on_line(line)
            else:  # several lines (calls in flight together): each handed on from C, no bytecode a line
                each(map(self.on_line, self.feed(data)))
        finally:
            if reading.sent:
                reading.ended()
            else:  # `Reading.ended` with nothing to flush, inline
                reading.open = False
                reading.turn += 1
