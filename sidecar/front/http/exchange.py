"""One POST's exchange: the frames its requests' answers, and what relates to them, come in.

Owns the order and the shape of a POST's answer: the first frame waits in a slot, and when
it is the one answer and the exchange ends with it, the POST is answered as JSON without a
queue ever being made; a second frame (progress, a relayed request) or a stream asked for
makes the byte-bounded queue (`sidecar.wire.outbox.FrameQueue`), the slot's frame first, and
the POST answers with an event stream. Refuses nothing: the session decides what goes in.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence

from sidecar.wire import RequestId
from sidecar.wire.outbox import FrameQueue, Shedding

__all__ = ["Exchange"]


class Exchange:
    """The frames one POST waits for: its answers, and what relates to its requests.

    Most POSTs get their one answer and nothing else: that answer waits in a slot, and the
    queue an event stream reads (`frames`, bounded in bytes) is made only when a second
    frame comes, or a stream is chosen, taking the answer first so the order holds."""

    __slots__ = ("waiting", "tokens", "streaming", "error_code", "early", "sent", "_queue", "_alone", "_ended",
                 "_waiter")

    def __init__(self, ids: Iterable[RequestId], tokens: Sequence[object] = ()) -> None:
        self.waiting = set(ids)
        self.tokens = {t for t in tokens if t is not None} if tokens else set()
        self.streaming = False  # the answer is an event stream, so more than answers may go in
        self.error_code: int | None = None  # of the last error answer put in, for the HTTP status
        # Writes a JSON answer the moment it ends the exchange, from the callback that brought
        # it, before the POST's handler wakes (`sidecar.front.http.answers.early_writer`).
        self.early: Callable[[bytes], object] | None = None
        self.sent: object = None  # what `early` gave back when it wrote the one answer: the handler's to return
        self._queue: FrameQueue | None = None
        self._alone: bytes | None = None  # the first frame, while no queue is made
        self._ended = False  # every request answered (or the session closed): no more frames
        self._waiter: asyncio.Future[None] | None = None  # `settled` waiting

    @property
    def frames(self) -> FrameQueue:
        """Every frame in order, then None (made on first use, holding what came before)."""
        queue = self._queue
        if queue is None:
            queue = self._queue = FrameQueue(Shedding("an HTTP client's answer stream"))
            if self._alone is not None:
                queue.put(self._alone)
                self._alone = None
            if self._ended:
                queue.put(None)
            self._wake()
        return queue

    def put(self, frame: bytes) -> None:
        if self._queue is None and self._alone is None and not self._ended:
            self._alone = frame
        else:
            self.frames.put(frame)

    def answer(self, frame: bytes, ident: RequestId, error_code: int | None = None) -> None:
        """`put` the answer to `ident`, then `answered`: one call on every request's way back."""
        if self._queue is None and self._alone is None and not self._ended:
            self._alone = frame
        else:
            self.frames.put(frame)
        self.answered(ident, error_code)

    def answered(self, ident: RequestId, error_code: int | None = None) -> None:
        if error_code is not None:
            self.error_code = error_code
        self.waiting.discard(ident)
        if not self.waiting:
            early = self.early
            if early is not None and self._alone is not None and self._queue is None and self.error_code is None:
                self.sent = early(self._alone)  # the one answer, a result: out now
            self.end()  # the end of this exchange

    def end(self) -> None:
        """No more frames: the requests are answered, or their session closed."""
        if self._ended:
            return
        self._ended = True
        if self._queue is not None:
            self._queue.put(None)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    async def settled(self) -> bytes | None:
        """The one answer, once it came alone and the exchange ended; None when anything
        else came (or nothing): then `frames` holds it all, for an event stream."""
        while self._queue is None and not self._ended:
            waiter = self._waiter
            if waiter is None or waiter.done():  # a cancelled wait cancelled its future: make another
                waiter = self._waiter = asyncio.get_running_loop().create_future()
            await waiter
        return self._alone if self._queue is None else None

    def discard(self) -> None:
        """Forget what its client did not stay for."""
        self._alone = None
        if self._queue is not None:
            self._queue.discard()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)
