"""Server-sent events (`text/event-stream`) decoded from bytes, with no I/O.

Owns the event-stream grammar: `event:`, `data:` (joined with newlines), `id:`,
`retry:`, comments, and the three line endings. Refuses events larger than its cap:
such an event is dropped whole and counted, and decoding resumes at the next event.
When the owner asks (`on_dropped`), the first and last bytes of a dropped event's data
are kept and handed over, so the request it answered can still be ended.
"""

from __future__ import annotations

from dataclasses import dataclass

from sidecar.wire.framing import DEFAULT_LINE_CAP, DropSink
from sidecar.wire.salvage import EDGE_BYTES, DroppedFrame

__all__ = ["EventStreamDecoder", "ServerEvent"]


@dataclass(frozen=True, slots=True)
class ServerEvent:
    event: str
    data: str
    id: str | None = None


class EventStreamDecoder:
    """Feed bytes in, take whole events out."""

    def __init__(self, max_event: int = DEFAULT_LINE_CAP, on_dropped: DropSink | None = None) -> None:
        self.max_event = max_event
        self.on_dropped = on_dropped
        self._edges = (b"", b"")  # a dropped event's head and tail
        self._cut_line = False  # the buffer was cut mid-line: what comes next is its rest
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
            if self._cut_line:
                self._cut_line = False
                self._size += len(line)
                self._keep_tail(line)
                continue
            event = self._line(line)
            if event is not None:
                events.append(event)
        if len(self._buffer) > self.max_event:
            self._drop(self._buffer[: EDGE_BYTES + 6].removeprefix(b"data:").removeprefix(b" "))
            self._size += len(self._buffer)
            self._keep_tail(self._buffer[-EDGE_BYTES:].decode("utf-8", "replace"))
            self._buffer.clear()
            self._scanned = 0
            self._cut_line = True
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
        self._size += len(value) + 1
        if self._discarding:
            self._keep_tail(value)
            return
        if self._size > self.max_event:
            self._drop(value.encode())
            self._keep_tail(value)
            return
        self._data.append(value)

    def _drop(self, more: bytes | bytearray = b"") -> None:
        if not self._discarding:
            self.oversized += 1
            if self.on_dropped is not None:
                head = "\n".join(self._data).encode()[:EDGE_BYTES]
                self._edges = ((head + b"\n" + bytes(more) if head else bytes(more))[:EDGE_BYTES], b"")
        self._discarding = True
        self._data.clear()

    def _keep_tail(self, text: str) -> None:
        if self.on_dropped is not None:
            head, tail = self._edges
            self._edges = (head, (tail + text[-EDGE_BYTES:].encode())[-EDGE_BYTES:])

    def _dispatch(self) -> ServerEvent | None:
        data, event, discarded = self._data, self._event or "message", self._discarding
        size, (head, tail) = self._size, self._edges
        self._data, self._event, self._size, self._discarding = [], "", 0, False
        self._edges = (b"", b"")
        if discarded and self.on_dropped is not None:
            self.on_dropped(DroppedFrame(size, f"over the {self.max_event}-byte event cap", head, tail))
        if discarded or not data:
            return None
        return ServerEvent(event, "\n".join(data), self.last_id)
