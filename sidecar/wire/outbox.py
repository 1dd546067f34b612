"""Frames on their way to the engine: coalesced writes, and the bound on every sink.

`Outbox`: the first frame of a loop turn leaves at once; frames that follow it in the
same turn are joined and leave together at the end of the turn. A lone answer (a
sequential call) pays no extra loop turn; under load, many answers ready in one turn
cost one write instead of one each. While a pipe's read is handled (`READING`: the
engine's requests, an upstream's answers, each sent on from the read's own callback)
the read is the turn: its followers leave when the read's handling ends, with no
callback scheduled on the loop per frame.

`Shedding` and `FrameQueue`: an engine that stops reading must not grow the sidecar.
Every sink toward an engine (stdout, an HTTP session's GET stream, a POST's answer
stream, a `subscriptions/listen` stream) is measured in bytes. Past a soft mark the
chatter (progress and log messages) is dropped; past the hard mark every notification
and every request an upstream relays is refused; answers to the engine's own requests
always go in. What bounds those answers is the engine itself: each is owed to a request
it sent, and a sink that is full stops the reading of new requests where it can (stdio)
or sees each answer only once its request arrived (HTTP). Drops are counted per sink and
logged as a warning at the 1st, 10th, 100th... drop.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Callable

__all__ = [
    "CHATTER",
    "HARD_BYTES",
    "IDLE_HARD_BYTES",
    "SOFT_BYTES",
    "TOTAL_BYTES",
    "FrameQueue",
    "Outbox",
    "READING",
    "Reading",
    "Shedding",
    "queued_total",
]

log = logging.getLogger(__name__)

DROPPED_IN_PROCESS = [0]  # every frame any sink refused, for the metrics (one process-wide figure)
SOFT_BYTES = 1 << 20  # past this, progress and log messages toward a sink are dropped
HARD_BYTES = 4 << 20  # past this, every notification and relayed request is refused
IDLE_HARD_BYTES = 256 << 10  # a GET stream nobody opened yet keeps at most this much
TOTAL_BYTES = 32 << 20  # all queues of the process together, for notifications
CHATTER = frozenset({"notifications/progress", "notifications/message"})

_total = [0]  # bytes held by every FrameQueue of the process


def queued_total() -> int:
    return _total[0]


class Shedding:
    """The rule for one sink: may one more frame of `method` (None: a request) go in,
    given what the sink holds already? Counts what it refuses."""

    __slots__ = ("where", "soft", "hard", "dropped", "_warn_at")

    def __init__(self, where: str, soft: int = SOFT_BYTES, hard: int = HARD_BYTES) -> None:
        self.where = where
        self.soft = soft
        self.hard = hard
        self.dropped: dict[str, int] = {}  # kind -> frames refused (a dict: one is made per HTTP request)
        self._warn_at = 1

    def fits(self, method: str | None, held: int, hard: int | None = None) -> bool:
        """Whether it would go in (nothing counted)."""
        limit = min(self.soft, hard or self.soft) if method in CHATTER else (hard or self.hard)
        return held < limit and _total[0] < TOTAL_BYTES

    def admits(self, method: str | None, held: int, hard: int | None = None) -> bool:
        """Whether it goes in; a refusal is counted as a drop."""
        if self.fits(method, held, hard):
            return True
        kind = method or "request"
        self.dropped[kind] = self.dropped.get(kind, 0) + 1
        DROPPED_IN_PROCESS[0] += 1
        total = sum(self.dropped.values())
        if total >= self._warn_at:
            self._warn_at *= 10
            most = sorted(self.dropped.items(), key=lambda item: -item[1])[:4]
            kinds = ", ".join(f"{n} {kind}" for kind, n in most)
            log.warning("%s is not reading fast enough: %d frames toward it dropped so far (%s)",
                        self.where, total, kinds)
        return False


class FrameQueue:
    """Frames toward one engine stream, in order, measured in bytes. `put` always takes
    the frame (answers, and `None` or `b""` as end markers); `offer` takes a notification
    or relayed request only if the sink's `Shedding` admits it. One reader at a time
    (`get`): it waits on a future made only when the queue is empty (one queue per HTTP
    request, most of which never wait twice: an `asyncio.Event` cost a future anyway)."""

    def __init__(self, shedding: Shedding) -> None:
        self.shedding = shedding
        self.bytes = 0
        self._frames: collections.deque[bytes | None] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None
        self._owed: dict[str, bytes] = {}  # list changes shed: they go once the queue drains

    def __len__(self) -> int:
        return len(self._frames)

    def put(self, frame: bytes | None) -> None:
        size = len(frame) if frame else 0
        self.bytes += size
        _total[0] += size
        self._frames.append(frame)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def admits(self, method: str | None, hard: int | None = None) -> bool:
        return self.shedding.admits(method, self.bytes, hard)

    def offer(self, frame: bytes, method: str | None, hard: int | None = None) -> bool:
        if not self.admits(method, hard):
            if method is not None and method.endswith("/list_changed"):
                self._owed[method] = frame  # a missed change is still news: one of each kind
            return False
        self.put(frame)
        return True

    def get_nowait(self) -> bytes | None:
        frame = self._frames.popleft()
        size = len(frame) if frame else 0
        self.bytes -= size
        _total[0] -= size
        if not self._frames and self._owed and frame:
            owed, self._owed = self._owed, {}
            for late in owed.values():
                self.put(late)
        return frame

    async def get(self) -> bytes | None:
        """The next frame; safe to cancel (a frame is taken only when it is returned)."""
        while not self._frames:
            waiter = self._waiter
            if waiter is None or waiter.done():  # a cancelled wait cancelled its future: make another
                waiter = self._waiter = asyncio.get_running_loop().create_future()
            await waiter
        return self.get_nowait()

    def discard(self) -> None:
        """Forget every frame (the stream is gone for good); the bytes are given back."""
        _total[0] -= self.bytes
        self.bytes = 0
        self._frames.clear()
        self._owed.clear()

    def __del__(self) -> None:
        # A queue dropped on a path that never discarded it still gives its bytes back: the
        # process-wide total counts only queues that exist, whichever way each one ended.
        _total[0] -= self.bytes


class Reading:
    """Whether a pipe's read is being handled now (`open`, set by the reading protocols
    through `sidecar.wire.framing.LineFramer.read`), which read it is (`turn`, a number
    each read ends with a new one of), and the outboxes that queued a frame in it
    (`sent`): each is flushed when the read's handling ends (`ended`), as the loop turn's
    end would have. An outbox whose one frame of the read left at once is not listed:
    its turn is over when the number moves on, with nothing to do at the read's end."""

    __slots__ = ("open", "turn", "sent")

    def __init__(self) -> None:
        self.open = False
        self.turn = 0
        self.sent: list[Outbox] = []

    def ended(self) -> None:
        """The read is handled: what followed a first frame in it leaves now."""
        self.open = False
        self.turn += 1
        sent = self.sent
        if sent:
            self.sent = []
            for outbox in sent:
                try:
                    outbox.flush()
                except Exception:  # as a callback of the loop's would be: logged, the others still go
                    log.exception("writing frames after a read failed")


READING = Reading()  # one loop thread per process: the read under way is its only one


class Outbox:
    """Frames toward one pipe, coalesced per loop turn (the module's docstring). Written
    through `write`, or, once `to` named it, straight to a transport (a frame less per
    write), dropped once that transport is closing."""

    __slots__ = ("_write", "_queued", "_loop", "_turn_open", "_read", "queued_bytes", "_transport")

    def __init__(self, write: Callable[[bytes], None], loop: asyncio.AbstractEventLoop) -> None:
        self._write = write
        self._queued: list[bytes] = []
        self._loop = loop
        # Frames queue at once, with no test of the read: after one left outside a read (the
        # rest of the loop turn), or once one queued in a read (the rest of that read); the
        # flush that is then due (the turn's, or the read's end) sets it back.
        self._turn_open = False
        self._read = -1  # the read (`Reading.turn`) a frame last left in at once
        self.queued_bytes = 0
        self._transport: asyncio.WriteTransport | None = None

    def to(self, transport: asyncio.WriteTransport) -> None:
        """Write to `transport` from now on (what `write` did with it, with no call of it):
        a frame goes only while the transport is not closing."""
        self._transport = transport

    def __call__(self, frame: bytes) -> None:
        if not self._turn_open:
            reading = READING
            if not reading.open:  # the loop turn is the group: its end flushes the rest
                self._turn_open = True
                self._loop.call_soon(self.flush)
            elif self._read != reading.turn:  # the read's first frame here: the rest wait for its end
                self._read = reading.turn
            else:
                if not self._queued:
                    reading.sent.append(self)
                    self._turn_open = True  # the read's next frames: straight to the queue
                self._queued.append(frame)
                self.queued_bytes += len(frame)
                return
            transport = self._transport
            if transport is None:
                self._write(frame)
            elif not transport.is_closing():
                transport.write(frame)
            return
        self._queued.append(frame)  # the loop turn's flush takes it, a read's frame too (in order)
        self.queued_bytes += len(frame)

    def flush(self) -> None:
        self._turn_open = False
        queued = self._queued
        if queued:  # a lone answer's turn queued nothing: no new list, nothing to count
            self._queued = []
            self.queued_bytes = 0
            frame = queued[0] if len(queued) == 1 else b"".join(queued)
            transport = self._transport
            if transport is None:
                self._write(frame)
            elif not transport.is_closing():
                transport.write(frame)
