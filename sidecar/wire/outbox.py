"""Coalesced writes: the first frame of a loop turn leaves at once; frames that follow it
in the same turn are joined and leave together at the end of the turn.

A lone answer (a sequential call) pays no extra loop turn; under load, many answers
ready in one turn cost one write instead of one each.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["Outbox"]


class Outbox:
    __slots__ = ("_write", "_queued", "_loop", "_turn_open")

    def __init__(self, write: Callable[[bytes], None], loop: asyncio.AbstractEventLoop) -> None:
        self._write = write
        self._queued: list[bytes] = []
        self._loop = loop
        self._turn_open = False

    def __call__(self, frame: bytes) -> None:
        if self._turn_open:
            self._queued.append(frame)
            return
        self._turn_open = True
        self._loop.call_soon(self.flush)
        self._write(frame)

    def flush(self) -> None:
        self._turn_open = False
        queued, self._queued = self._queued, []
        if queued:
            self._write(queued[0] if len(queued) == 1 else b"".join(queued))
