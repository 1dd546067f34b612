"""Newline-delimited framing with a line cap and resync at the next newline."""

from __future__ import annotations

__all__ = ["LineFramer", "DEFAULT_LINE_CAP"]

# Well above the largest result the gate holds (64 MiB per upstream).
DEFAULT_LINE_CAP = 160 * 1024 * 1024


class LineFramer:
    """Feeds bytes in, takes whole lines out.

    A line longer than `max_line` is dropped whole: bytes are discarded until the next
    newline, and `oversized` counts how many lines were lost that way. Blank lines are
    skipped. A trailing `\\r` is removed.
    """

    __slots__ = ("max_line", "oversized", "_buffer", "_discarding", "_scanned")

    def __init__(self, max_line: int = DEFAULT_LINE_CAP) -> None:
        self.max_line = max_line
        self.oversized = 0
        self._buffer = bytearray()
        self._discarding = False
        self._scanned = 0

    def feed(self, data: bytes) -> list[bytes]:
        """Return every line completed by `data`, in order."""
        if not self._buffer and not self._discarding and data.endswith(b"\n"):
            if data.count(b"\n") == 1 and len(data) <= self.max_line + 1:
                line = data.rstrip(b"\r\n")
                return [line] if line.strip() else []
        self._buffer += data
        lines: list[bytes] = []
        while True:
            newline = self._buffer.find(b"\n", self._scanned)
            if newline < 0:
                self._scanned = len(self._buffer)
                self._drop_if_oversized()
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
                continue
            if len(line) > self.max_line:
                self.oversized += 1
                continue
            line = line.rstrip(b"\r")
            if line.strip():
                lines.append(line)

    def _drop_if_oversized(self) -> None:
        if len(self._buffer) > self.max_line:
            if not self._discarding:
                self.oversized += 1
            self._discarding = True
            self._buffer.clear()
            self._scanned = 0

    @property
    def pending_bytes(self) -> int:
        return len(self._buffer)
