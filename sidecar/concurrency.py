"""Structured concurrency on asyncio itself, for the runtime path.

anyio costs about 35 ms of start-up (its package and its asyncio backend), and start-up
sits in front of every engine turn, so the stdio path uses asyncio's own TaskGroup and
timeouts. Owns the three things asyncio leaves to us: a task owner that is not a scope
(`Jobs`), a timeout that moves on instead of raising (`move_on_after`), and cleanup that
finishes even when its task is cancelled again (`finish`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Coroutine
from typing import Any, TypeVar

__all__ = ["Jobs", "finish", "move_on_after"]

T = TypeVar("T")


class Jobs:
    """The owner of tasks started from callbacks (one per request): every task is kept
    until it ends, and `aclose` cancels and awaits whatever is left."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._running: set[asyncio.Task[None]] = set()
        self._forget = self._running.discard
        self._closed = False

    def spawn(self, job: Coroutine[Any, Any, None]) -> None:
        if self._closed:
            job.close()
            return
        task = self._loop.create_task(job)
        self._running.add(task)
        task.add_done_callback(self._forget)

    async def aclose(self) -> None:
        """Cancel what still runs and wait for it. A task that ended but whose done
        callback has not run yet (a stateless request closes its session in the turn its
        answer went) is not waited for: nothing is left to wait for."""
        self._closed = True
        left = [task for task in self._running if not task.done()]
        for task in left:
            task.cancel()
        if left:
            await asyncio.wait(left)

    async def settle(self, seconds: float, interrupt: asyncio.Future[Any]) -> None:
        """Let what still runs finish on its own, for at most `seconds` or until
        `interrupt` is done; cancels nothing (`aclose` does that afterwards)."""
        async with move_on_after(seconds):
            while not interrupt.done():
                left = [task for task in self._running if not task.done()]
                if not left:
                    return
                await asyncio.wait([*left, interrupt], return_when=asyncio.FIRST_COMPLETED)

    def __len__(self) -> int:
        return len(self._running)


@contextlib.asynccontextmanager
async def move_on_after(seconds: float) -> AsyncIterator[None]:
    """Run the body for at most `seconds`; past that, go on without an error."""
    try:
        async with asyncio.timeout(seconds):
            yield
    except TimeoutError:
        pass


async def finish(cleanup: Awaitable[T]) -> T:
    """Await `cleanup` to its end even if this task is cancelled meanwhile; a cancel that
    came during it is raised afterwards."""
    task = asyncio.ensure_future(cleanup)
    interrupted = False
    while True:
        try:
            result = await asyncio.shield(task)
            break
        except asyncio.CancelledError:
            if task.done() and task.cancelled():
                raise
            interrupted = True
    if interrupted:
        raise asyncio.CancelledError
    return result
