"""Server-sent events (`text/event-stream`) decoded from bytes, with no I/O.

Owns the event-stream grammar: `event:`, `data:` (joined with newlines), `id:`,
`retry:`, comments, and the three line endings. Refuses events larger than its cap:
such an event is dropped whole and counted, and decoding resumes at the next event.
"""

from __future__ import annotations

from dataclasses import dataclass

from sidecar.wire.framing import DEFAULT_LINE_CAP

__all__ = ["EventStreamDecoder", "ServerEvent"]


@dataclass(frozen=True, slots=True)
class ServerEvent:
    event: str
    data: str
    id: str | None = None


class EventStreamDecoder:
    """Feed bytes in, take whole events out."""

    def __init__(self, max_event: int = DEFAULT_LINE_CAP) -> None:
        self.max_event = max_event
        self.oversized = 0
        self.last_id: str | None = None
        self.retry_ms: int | None = None
        self._buffer = bytearray()
        self._data: list[str] = []
        self._size = 0
        self._event = ""
        self._discarding = False
        self._scanned = 0

    def feed(self, chunk: bytes) -> list[ServerEvent]:
        self._buffer += chunk
        events: list[ServerEvent] = []
        while True:
            line = self._take_line()
            if line is None:
                break
            event = self._line(line)
            if event is not None:
                events.append(event)
        if len(self._buffer) > self.max_event:
            self._drop()
            self._buffer.clear()
            self._scanned = 0
        return events

    def _take_line(self) -> str | None:
        buffer = self._buffer
        ends = [p for p in (buffer.find(b"\n", self._scanned), buffer.find(b"\r", self._scanned)) if p >= 0]
        if not ends:
            self._scanned = len(buffer)
            return None
        cut = min(ends)
        if buffer[cut] == 13 and cut + 1 == len(buffer):
            self._scanned = cut
            return None  # a lone CR at the end: wait, it may be CR LF
        width = 2 if buffer[cut] == 13 and buffer[cut + 1] == 10 else 1
        line = bytes(buffer[:cut]).decode("utf-8", "replace")
        del buffer[: cut + width]
        self._scanned = 0
        return line

    def _line(self, line: str) -> ServerEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "data":
            self._add_data(value)
        elif field == "event":
            self._event = value
        elif field == "id" and "\0" not in value:
            self.last_id = value
        elif field == "retry" and value.isdigit():
            self.retry_ms = int(value)
        return None

    def _add_data(self, value: str) -> None:
        if self._discarding:
            return
        self._size += len(value) + 1
        if self._size > self.max_event:
            self._drop()
            return
        self._data.append(value)

    def _drop(self) -> None:
        if not self._discarding:
            self.oversized += 1
        self._discarding = True
        self._data.clear()

    def _dispatch(self) -> ServerEvent | None:
        data, event, discarded = self._data, self._event or "message", self._discarding
        self._data, self._event, self._size, self._discarding = [], "", 0, False
        if discarded or not data:
            return None
        return ServerEvent(event, "\n".join(data), self.last_id)
