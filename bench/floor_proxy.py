"""The least a Python asyncio stdio proxy does: the floor for a proxy written in Python.

Owns nothing but the work no MCP proxy in Python can skip: uvloop, the engine's lines
framed, each decoded as far as its envelope (msgspec, `params` and `result` kept raw),
one task per request, the request renumbered and forwarded, the answer matched by id and
renumbered back, writes as they come. No validation, no gate, no catalog, no
notifications (they are dropped), no cancellation. It is the yardstick between the byte
relay (`relay.py`: no parsing at all) and the sidecar: what the sidecar adds beyond it is
its own doing; what it adds beyond the relay is Python's.

`python bench/floor_proxy.py -- CMD ARG...`
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable

import uvloop
from floor_envelope import Envelope, answer_line, decode, request_line  # a sibling: this runs as a script


class Lines(asyncio.Protocol):
    """Whole lines to `on_line`; the end of input resolves `closed`."""

    def __init__(self, on_line: Callable[[bytes], None], closed: asyncio.Future[None] | None = None) -> None:
        self.buffer = bytearray()
        self.scanned = 0
        self.on_line = on_line
        self.closed = closed

    def data_received(self, data: bytes) -> None:
        if not self.buffer and data.endswith(b"\n") and data.count(b"\n") == 1:
            self.on_line(data)  # the common case: one whole line
            return
        self.buffer += data
        start = 0
        while (end := self.buffer.find(b"\n", max(start, self.scanned))) >= 0:
            if end > start:
                self.on_line(bytes(self.buffer[start:end]))
            start = end + 1
        del self.buffer[:start]
        self.scanned = len(self.buffer)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.closed is not None and not self.closed.done():
            self.closed.set_result(None)


async def relay(argv: list[str]) -> None:
    loop = asyncio.get_running_loop()
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    upstream, _ = await loop.connect_write_pipe(asyncio.Protocol, child.stdin)
    engine, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(os.dup(1), "wb", buffering=0))
    waiting: dict[int, asyncio.Future[Envelope]] = {}
    tasks: set[asyncio.Task[None]] = set()
    counter = 0

    def answered(line: bytes) -> None:
        message = decode(line)
        future = waiting.pop(message.id, None) if isinstance(message.id, int) else None
        if future is not None:
            future.set_result(message)

    async def serve(request: Envelope, ident: int) -> None:
        future = waiting[ident] = loop.create_future()
        upstream.write(request_line(ident, request))
        engine.write(answer_line(request.id, await future))

    def asked(line: bytes) -> None:
        nonlocal counter
        request = decode(line)
        if request.method is None or request.id is None:
            return
        counter += 1
        task = loop.create_task(serve(request, counter))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    await loop.connect_read_pipe(lambda: Lines(answered), child.stdout)
    closed: asyncio.Future[None] = loop.create_future()
    await loop.connect_read_pipe(lambda: Lines(asked, closed), os.fdopen(os.dup(0), "rb", buffering=0))
    await closed
    child.stdin.close()
    child.wait()


def main() -> None:
    if "--" not in sys.argv:
        raise SystemExit("usage: floor_proxy.py -- CMD ARG...")
    uvloop.run(relay(sys.argv[sys.argv.index("--") + 1:]))


if __name__ == "__main__":
    main()
