"""Coalesced writes: frames queued in one turn of the event loop leave in one write.

Under load many answers are ready in the same loop turn; joining them saves a syscall
per frame. A lone frame leaves on the next turn, so latency grows by one loop turn only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["Outbox"]


class Outbox:
    __slots__ = ("_write", "_queued", "_loop")

    def __init__(self, write: Callable[[bytes], None], loop: asyncio.AbstractEventLoop) -> None:
        self._write = write
        self._queued: list[bytes] = []
        self._loop = loop

    def __call__(self, frame: bytes) -> None:
        if not self._queued:
            self._loop.call_soon(self.flush)
        self._queued.append(frame)

    def flush(self) -> None:
        queued, self._queued = self._queued, []
        if queued:
            self._write(queued[0] if len(queued) == 1 else b"".join(queued))
