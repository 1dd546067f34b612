"""What the engine already wrote on stdin before the runtime loads, and the early answer to it.

Owns the one look at stdin a stdio start takes before its event loop runs: only when stdin
is a pipe or a socket with bytes waiting (never a wait: a file or a terminal, or nothing
written yet, is left to the stdio front), one read, and the answer written whole. Two
callers, both with the standard library and `sidecar.wire.plain_hello` only loaded here:

- the entry point (`sidecar.entry`), right after it started a plain config's stdio
  upstreams and before msgspec and the CLI load: `answer_ahead` answers a waiting
  `initialize` with `sidecar.wire.plain_hello.answer_plainly` and hands what it read to
  the CLI (`Ahead`);
- the CLI (`sidecar.cli`), once the config is read, for what the entry point left: its
  `initialize` answered by `sidecar.wire.hello.answer_waiting` from the same bytes.

Off when OTLP export is on (the dispatcher's answer is the one traced): `otlp_export_wanted`
says it as `sidecar.settings` does (a test holds both to the same answer).
"""

from __future__ import annotations

import os
import select
import stat
import sys
from collections.abc import Mapping

from sidecar.wire.plain_hello import Ahead, answer_plainly, starting_capabilities

__all__ = ["answer_ahead", "otlp_export_wanted", "read_waiting", "write_whole"]

_READ = 1 << 16  # one read: an engine's first lines, the handshake and a little more


def otlp_export_wanted(environ: Mapping[str, str]) -> bool:
    """Whether traces are exported (`sidecar.settings.Settings.tracing`): an OTLP endpoint
    set the standard way and the SDK not switched off."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return bool(environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def read_waiting() -> bytes | None:
    """What the engine wrote so far when stdin is a pipe or a socket with bytes waiting (b""
    at its end); None when there is nothing to read now or stdin is anything else."""
    if sys.stdin is None:
        return None
    try:
        fd = sys.stdin.fileno()
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)) or not select.select([fd], [], [], 0)[0]:
            return None
        return os.read(fd, _READ)
    except (OSError, ValueError):
        return None


def write_whole(answer: bytes) -> None:
    """Write `answer` to stdout whole (dropped if the engine closed it, as later)."""
    view = memoryview(answer)
    try:
        while view:
            view = view[os.write(sys.stdout.fileno(), view):]
    except (OSError, ValueError, AttributeError):  # closed, or no stdout at all
        pass


def answer_ahead(upstreams: int, tracing: bool) -> Ahead | None:
    """Answer a waiting `initialize` now, for a face whose `upstreams` (at least one) are on
    their first start; what was read, answered or not, for the CLI. None: nothing read."""
    if tracing or not upstreams:
        return None
    waiting = read_waiting()
    if waiting is None:
        return None
    answered = answer_plainly(waiting, starting_capabilities(upstreams))
    if answered is None:
        return Ahead(waiting, False)
    write_whole(answered[0])
    return Ahead(waiting, True)
