"""Structured concurrency on asyncio itself: the runtime's one dialect.

Every front (stdio, HTTP, the gateway) and the upstream pool use asyncio's own
`TaskGroup` for scopes, `asyncio.timeout` for deadlines and the loop's signal handlers;
anyio is not on the runtime path (its asyncio backend adds to the start-up, which sits in
front of every engine turn: `python -X importtime`; it stays in tests and the admin commands).
Owns the two things asyncio leaves to us: a task owner that is not a scope, for tasks
started from callbacks (`Jobs`: a TaskGroup can only be entered by the task that awaits
it; it also holds work started in a callback with no task of its own, by a future or by
any `Held` (a plain call under way: `sidecar.gate.inline.Started`), so it is cancelled and
awaited alike; or, given a `HeldSource` (`hold_from`), finds such work there when it
settles or closes, and nothing is handed to it per call), and cleanup that finishes even when its task is
cancelled again (`finish`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from itertools import filterfalse
from operator import methodcaller
from typing import Any, Protocol, TypeVar

__all__ = ["Held", "HeldSource", "Jobs", "finish"]

T = TypeVar("T")


class Held(Protocol):
    """Work held with no task and no future of its own: it says whether it ended, ends at
    once when cancelled (its done callbacks then run), and tells a done callback when it
    ended (only a settling owner asks)."""

    def done(self) -> bool: ...

    def cancel(self) -> bool: ...

    def add_done_callback(self, fn: Callable[[Any], object], /) -> None: ...


class HeldSource(Protocol):
    """Who knows the work under way with no task (a stdio session's dispatcher, through
    where each plain call went: `sidecar.front.dispatcher.Dispatcher.held`), so its owner
    need not be told of each: `held` lists what is under way now; `stop_holding` makes
    what starts later take a task (which a closed owner closes unstarted)."""

    def held(self) -> list[Held]: ...

    def stop_holding(self) -> None: ...


class _NoSource:
    """An owner handed its held work one by one (`Jobs.hold`): nothing to find elsewhere."""

    def held(self) -> list[Held]:
        return []

    def stop_holding(self) -> None:
        pass


_NO_SOURCE = _NoSource()
_ended = methodcaller("done")
_SWEEP_FLOOR = 64  # ended tasks are let go in batches, once the set holds at least this many


class Jobs:
    """The owner of tasks started from callbacks (one per request): every task is kept
    until it ends, and `aclose` cancels and awaits whatever is left. Ended tasks are let
    go in batches when the set has doubled since the last sweep (amortised, a few per
    spawn), not by a done callback each: that callback cost every request one more turn
    of the loop's ready queue."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._running: set[asyncio.Future[Any] | Held] = set()  # tasks, and work held (`hold`)
        self._sweep_at = _SWEEP_FLOOR
        self._closed = False
        self._source: HeldSource = _NO_SOURCE

    def hold_from(self, source: HeldSource) -> None:
        """Find the work held with no task in `source` when settling or closing, instead
        of being handed each with `hold` (no call per plain call)."""
        self._source = source

    def spawn(self, job: Coroutine[Any, Any, None]) -> None:
        if self._closed:
            job.close()
            return
        running = self._running
        if len(running) >= self._sweep_at:
            running = self._sweep()
        running.add(self._loop.create_task(job))

    def hold(self, waiting: asyncio.Future[Any] | Held) -> None:
        """Own work with no task of its own, by the future it waits on or as a `Held` (a
        plain `tools/call` started in the reader's callback): `aclose` cancels it as it
        would a task, and its done callbacks end the work. After `aclose`, it is cancelled
        at once."""
        running = self._running
        if len(running) < self._sweep_at:  # 0 once closed: a closed owner never gets here
            running.add(waiting)
        elif self._closed:
            waiting.cancel()
        else:
            self._sweep().add(waiting)

    def _sweep(self) -> set[asyncio.Future[Any] | Held]:
        """Let ended tasks go; the next sweep comes when the set has doubled again."""
        running = self._running = set(filterfalse(_ended, self._running))  # no bytecode per task
        self._sweep_at = max(_SWEEP_FLOOR, 2 * len(running))
        return running

    async def aclose(self) -> None:
        """Cancel what still runs and wait for it. A task that ended but whose done
        callback has not run yet (a stateless request closes its session in the turn its
        answer went) is not waited for: nothing is left to wait for."""
        self._closed = True
        self._sweep_at = 0  # `hold` meets the closed owner on its one test
        self._source.stop_holding()  # a call read from now on takes a task, and `spawn` closes it
        left = [task for task in (*self._running, *self._source.held()) if not task.done()]
        for task in left:
            task.cancel()  # a `Held` ends here and now; a task or future when it next runs
        waited = [task for task in left if isinstance(task, asyncio.Future)]
        if waited:
            await asyncio.wait(waited)

    def close_idle(self) -> bool:
        """Close at once when nothing it started still runs (no task to await: a held
        call that ended with its answer); False, and still open, when `aclose` is needed."""
        if self.running():
            return False
        self._closed = True
        self._sweep_at = 0
        self._source.stop_holding()
        self._running.clear()
        return True

    async def settle(self, seconds: float, interrupt: asyncio.Future[Any]) -> None:
        """Let what still runs finish on its own, for at most `seconds` or until
        `interrupt` is done; cancels nothing (`aclose` does that afterwards)."""
        try:
            async with asyncio.timeout(seconds):
                while not interrupt.done():
                    left = [_awaitable(task) for task in (*self._running, *self._source.held()) if not task.done()]
                    if not left:
                        return
                    await asyncio.wait([*left, interrupt], return_when=asyncio.FIRST_COMPLETED)
        except TimeoutError:
            pass  # the time for settling is over: what still runs is left to `aclose`

    def running(self) -> bool:
        """Whether a task it started has not ended (one ended, its done callback not run yet, has)."""
        # `done` mapped in C: no bytecode per future. Each stateless request asks this of
        # its transient session: when every one ended they go now, as the next sweep would
        # let them, so a kept session is not asked again of up to `_SWEEP_FLOOR` ended
        # calls by each request after (a held call's `done` is a Python call: about 100
        # bytecodes a request when they piled up).
        running = self._running
        if not all(map(_ended, running)):
            return True
        running.clear()
        source = self._source  # an owner handed its work (`hold`: the HTTP sessions) has none to ask
        return source is not _NO_SOURCE and not all(map(_ended, source.held()))

    def __len__(self) -> int:
        """The tasks still running (ended ones may wait for the next sweep)."""
        return sum(1 for task in (*self._running, *self._source.held()) if not task.done())


def _awaitable(work: asyncio.Future[Any] | Held) -> asyncio.Future[Any]:
    """A future done when `work` ended (`work` itself, unless it is a `Held`)."""
    if isinstance(work, asyncio.Future):
        return work
    ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def tell(_: object) -> None:
        if not ended.done():
            ended.set_result(None)

    work.add_done_callback(tell)
    return ended


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
