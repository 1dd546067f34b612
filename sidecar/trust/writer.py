"""The process's one writer of first-sight pins: the store's write, off the loop.

Owns `off_loop`: a store call (the health file locked and read, a 425-tool listing's pins
encoded, about 1.4 MB written and fsynced: 3-7 ms of CPU) run in one worker thread kept for
the process, so the loop serves calls in flight meanwhile. Two upstreams prepared at once
take turns in that thread, each taking the file lock there, never on the loop's thread
(where a second lock in the same process would block the loop). A call once begun is
awaited to its end even when the task awaiting it is cancelled (a quick exit: stdin closed
at once), so no write is still going while the loop is torn down; the cancel is raised
after it.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from sidecar.concurrency import finish

__all__ = ["off_loop"]

T = TypeVar("T")

_made = threading.Lock()
_writer: ThreadPoolExecutor | None = None  # made at the first write (most starts pin nothing)


def _the_writer() -> ThreadPoolExecutor:
    global _writer
    with _made:
        if _writer is None:
            _writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="omb-pins-writer")
        return _writer


async def off_loop(call: Callable[..., T], *args: object) -> T:
    """`call(*args)` in the process's pin-writer thread, one at a time in the order asked;
    its result (or exception) once it ended."""
    loop = asyncio.get_running_loop()
    return await finish(loop.run_in_executor(_the_writer(), functools.partial(call, *args)))
