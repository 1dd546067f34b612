"""The least a threaded Python stdio proxy does: a second floor for a proxy written in Python.

Owns the same work as `floor_proxy.py` (each line decoded as far as its envelope by msgspec,
`params` and `result` kept raw, the request renumbered and forwarded, the answer matched by id
and renumbered back; no validation, no gate, notifications dropped), done without an event
loop: one thread per direction blocked in `os.read`, writes straight from the reading thread.
Why it is kept: py-floor answers "what does asyncio on uvloop cost at least"; this one answers
whether leaving the loop would bring a Python proxy under the targets set against the byte
relay. What it adds beyond the relay is Python's per-message work and its threads' wake-ups;
what py-floor adds beyond it is the loop's.

`python bench/thread_floor.py -- CMD ARG...`
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator

from floor_envelope import answer_line, decode, request_line  # a sibling: this runs as a script

__all__ = ["main"]


_CHUNK = 1 << 16


def _lines(fd: int) -> Iterator[bytes]:
    """Every non-empty line read from `fd`, without its line end, until the end of input (a
    long line gathered in one buffer, searched only where it grew: linear in its size)."""
    pending = bytearray()
    scanned = 0
    while data := os.read(fd, _CHUNK):
        if not pending and data.endswith(b"\n") and data.count(b"\n") == 1:
            yield data[:-1]  # the common case: one whole line
            continue
        pending += data
        start = 0
        while (end := pending.find(b"\n", max(start, scanned))) >= 0:
            if end > start:
                yield bytes(pending[start:end])
            start = end + 1
        del pending[:start]
        scanned = len(pending)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def relay(argv: list[str]) -> None:
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    to_upstream, from_upstream = child.stdin.fileno(), child.stdout.fileno()
    waiting: dict[int, int | str] = {}  # our id -> the engine's id
    lock = threading.Lock()

    def answers() -> None:
        for line in _lines(from_upstream):
            message = decode(line)
            with lock:
                asked = waiting.pop(message.id, None) if isinstance(message.id, int) else None
            if asked is None:
                continue
            _write_all(1, answer_line(asked, message))

    threading.Thread(target=answers, daemon=True).start()
    counter = 0
    for line in _lines(0):
        request = decode(line)
        if request.method is None or request.id is None:
            continue
        counter += 1
        with lock:
            waiting[counter] = request.id
        _write_all(to_upstream, request_line(counter, request))
    child.stdin.close()
    child.wait()


def main() -> None:
    if "--" not in sys.argv:
        raise SystemExit("usage: thread_floor.py -- CMD ARG...")
    relay(sys.argv[sys.argv.index("--") + 1:])


if __name__ == "__main__":
    main()
