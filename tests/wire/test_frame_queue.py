"""FrameQueue's one reader: a wait that is cancelled (a ping timeout) leaves the queue
able to wake the next wait, and frames come out in order whatever the interleaving."""

from __future__ import annotations

import asyncio
import collections

from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.wire.outbox import FrameQueue, Shedding

# ("put", n): a frame goes in; ("wait",): a get cancelled if nothing is there;
# ("get",): a get that a later put must wake.
_STEPS = st.lists(st.one_of(st.tuples(st.just("put"), st.integers(0, 99)), st.just(("wait",)), st.just(("get",))),
                  max_size=30)


async def _run(steps: list[tuple[object, ...]]) -> tuple[list[bytes | None], list[bytes | None]]:
    queue = FrameQueue(Shedding("test"))
    model: collections.deque[bytes | None] = collections.deque()
    seen: list[bytes | None] = []
    expected: list[bytes | None] = []
    pending: asyncio.Task[bytes | None] | None = None
    for step in steps:
        if step[0] == "put":
            frame = f"frame {step[1]}".encode()
            queue.put(frame)
            model.append(frame)
            if pending is not None:
                seen.append(await asyncio.wait_for(pending, 1.0))  # a put wakes the waiting reader
                expected.append(model.popleft())
                pending = None
        elif pending is None and step[0] == "wait":  # a reader whose wait is cancelled, as a ping timeout does
            reader = asyncio.ensure_future(queue.get())
            await asyncio.sleep(0)
            if reader.done():
                seen.append(reader.result())
                expected.append(model.popleft())
            else:
                assert not model  # only an empty queue makes a reader wait
                reader.cancel()
                await asyncio.gather(reader, return_exceptions=True)
        elif pending is None:
            pending = asyncio.ensure_future(queue.get())
            await asyncio.sleep(0)
            if model:
                seen.append(await pending)
                expected.append(model.popleft())
                pending = None
    if pending is not None:
        pending.cancel()
    return seen, expected


@settings(max_examples=200, deadline=None)
@given(_STEPS)
def test_frames_come_out_in_order_and_a_cancelled_wait_leaves_the_queue_awake(steps: list[tuple[object, ...]]) -> None:
    seen, expected = asyncio.run(_run(steps))
    assert seen == expected


def test_a_get_after_a_timed_out_get_is_woken_by_the_next_put() -> None:
    async def scenario() -> bytes | None:
        queue = FrameQueue(Shedding("test"))
        try:
            await asyncio.wait_for(queue.get(), 0.01)
        except TimeoutError:
            pass
        reader = asyncio.ensure_future(queue.get())
        await asyncio.sleep(0)
        queue.put(b"answer")
        return await asyncio.wait_for(reader, 1.0)

    assert asyncio.run(scenario()) == b"answer"
