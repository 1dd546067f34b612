"""Jobs, the owner of tasks started from callbacks: ended tasks are let go in sweeps
(no done callback per task), running ones are never dropped, and closing cancels them."""

from __future__ import annotations

import asyncio
import inspect

from sidecar.concurrency import Jobs

WAIT = 5.0


async def test_ended_tasks_are_let_go_in_sweeps_and_running_ones_kept() -> None:
    jobs = Jobs()
    release = asyncio.Event()
    started = 0

    async def waits() -> None:
        nonlocal started
        started += 1
        await release.wait()

    async def ends() -> None:
        return None

    for _ in range(50):
        jobs.spawn(waits())
    for _ in range(5000):
        jobs.spawn(ends())
        await asyncio.sleep(0)  # one loop turn: the task just spawned runs to its end
    async with asyncio.timeout(WAIT):
        while started < 50:
            await asyncio.sleep(0)
    assert len(jobs) == 50  # only the running ones count
    # Kept: every running task and at most the ended ones of one doubling since the last sweep.
    assert len(jobs._running) <= 2 * 64 + 50
    release.set()
    async with asyncio.timeout(WAIT):
        while len(jobs):
            await asyncio.sleep(0)


async def test_closing_cancels_what_still_runs_and_refuses_new_jobs() -> None:
    jobs = Jobs()
    cancelled = 0

    async def waits() -> None:
        nonlocal cancelled
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled += 1
            raise

    for _ in range(300):  # past several sweeps: a running task is never let go by one
        jobs.spawn(waits())
    await asyncio.sleep(0)
    assert len(jobs) == 300
    async with asyncio.timeout(WAIT):
        await jobs.aclose()
    assert cancelled == 300 and len(jobs) == 0
    refused = waits()
    jobs.spawn(refused)  # closed: the coroutine is closed, never run
    assert inspect.getcoroutinestate(refused) == inspect.CORO_CLOSED


async def test_held_futures_are_swept_settled_and_cancelled_as_tasks_are() -> None:
    jobs = Jobs()
    loop = asyncio.get_running_loop()
    waiting = [loop.create_future() for _ in range(40)]
    ended: list[str] = []
    for future in waiting:  # a started call's answer ends it in the future's done callback
        future.add_done_callback(lambda f: ended.append("cancelled" if f.cancelled() else "answered"))
        jobs.hold(future)
    for _ in range(3000):  # answered at once: let go by the sweeps, the waiting ones kept
        answered = loop.create_future()
        answered.set_result(None)
        jobs.hold(answered)
    assert len(jobs) == 40 and jobs.running()
    assert len(jobs._running) <= 2 * 64 + 40
    waiting[0].set_result(None)
    async with asyncio.timeout(WAIT):
        await jobs.settle(0.01, loop.create_future())  # a bounded wait: it cancels nothing
    assert all(not f.cancelled() for f in waiting)
    async with asyncio.timeout(WAIT):
        await jobs.aclose()  # cancels the rest; their done callbacks ran before it returns
    assert sorted(ended) == ["answered"] + ["cancelled"] * 39 and not jobs.running()
    late = loop.create_future()
    jobs.hold(late)  # closed: cancelled at once
    assert late.cancelled()


async def test_an_owner_with_nothing_running_closes_at_once_and_one_still_running_does_not() -> None:
    jobs = Jobs()
    done = asyncio.get_running_loop().create_future()
    done.set_result(None)
    jobs.hold(done)
    assert jobs.close_idle()  # what it held is over: closed, with no task to await
    late = asyncio.get_running_loop().create_future()
    jobs.hold(late)
    assert late.cancelled()  # closed: held work is cancelled at once
    started = asyncio.Event()

    async def job() -> None:
        started.set()
        await asyncio.sleep(60)

    busy = Jobs()
    busy.spawn(job())
    await started.wait()
    assert not busy.close_idle()  # something still runs: `aclose` is the way
    await busy.aclose()


class _HeldCall:
    """Work held with no task (as a plain call's `Started`): `done` is a Python method."""

    def __init__(self) -> None:
        self.over = False
        self.asked = 0

    def done(self) -> bool:
        self.asked += 1
        return self.over

    def cancel(self) -> bool:
        self.over = True
        return True

    def add_done_callback(self, fn: object) -> None:
        raise AssertionError("not waited for here")


async def test_asking_whether_anything_runs_lets_ended_held_work_go() -> None:
    """A kept transient session is asked `running` by every request: held calls that ended
    are let go once all ended, so the next request is not asked of them again."""
    jobs = Jobs()
    calls = [_HeldCall() for _ in range(10)]
    for call in calls:
        jobs.hold(call)  # type: ignore[arg-type]
    calls[0].over = True
    assert jobs.running() and len(jobs._running) == 10  # one still runs: nothing goes
    for call in calls:
        call.over = True
    assert not jobs.running() and not jobs._running
    asked = [call.asked for call in calls]
    assert not jobs.running() and [call.asked for call in calls] == asked
