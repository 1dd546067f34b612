"""The owner of per-request tasks.

A request task is started straight on the event loop (an anyio task group costs several
times more per task, and every `tools/call` starts one), but it is never stray: this
owner keeps each one until it ends, and `aclose` cancels and awaits whatever is left.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

__all__ = ["Jobs"]


class Jobs:
    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._running: set[asyncio.Task[None]] = set()
        self._closed = False

    def spawn(self, job: Coroutine[Any, Any, None]) -> None:
        if self._closed:
            job.close()
            return
        task = self._loop.create_task(job)
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def aclose(self) -> None:
        self._closed = True
        for task in list(self._running):
            task.cancel()
        if self._running:
            await asyncio.wait(list(self._running))

    def __len__(self) -> int:
        return len(self._running)
