"""What the engine already wrote on stdin before the runtime loads, and the early answer to it.

Owns the one look at stdin a stdio start takes before its event loop runs: only when stdin
is a pipe or a socket with bytes waiting (never a wait: a file or a terminal, or nothing
written yet, is left to the stdio front), one read, and the answer written whole. Two
callers, both with the standard library and `sidecar.wire.plain_hello` only loaded here
(no `json`, `typing` or `collections`: `sidecar.plain_json` reads and writes):

- the entry point (`sidecar.entry`), right after it started a plain config's stdio
  upstreams and before msgspec and the CLI load: `answer_ahead` answers a waiting
  `initialize` with `sidecar.wire.plain_hello.answer_plainly` and hands what it read to
  the CLI (`Ahead`);
- the CLI (`sidecar.cli`), once the config is read, for what the entry point left: its
  `initialize` answered by `sidecar.wire.hello.answer_waiting` from the same bytes.

Then, once it answered the `initialize`, the entry point's listing ahead
(`answer_listing_ahead`): when a listing snapshot is kept for this config under this
start's `prekey` (`sidecar.listing_snapshot`: all but the upstreams' answers), it reads the
snapshot whole and checks it (while the upstreams still start), reads on until the engine's
first `tools/list` (page one) is waiting, waits for every early upstream's listing, and when
the snapshot's key is this start's answers it from the snapshot, the engine's id spliced in,
still before msgspec loads, then each next page the engine asks for at once; those lines
are then cut from what the runtime reads (it never answers them twice). Every other byte
read goes on to the CLI, in order. The reads are bounded (`AHEAD_CAP` in all,
`LINE_WAIT_SECONDS` for each line to come).

Off when OTLP export is on (the dispatcher's answer is the one traced): `otlp_export_wanted`
says it as `sidecar.settings` does (a test holds both to the same answer).
"""

from __future__ import annotations

import os
import select
import stat
import sys
import time

from sidecar.listing_snapshot import ListingInputs, read_kept, snapshot_expected
from sidecar.plain_json import json_text
from sidecar.wire.plain_hello import Ahead, ListedAhead, answer_plainly, plain_request, starting_capabilities

TYPE_CHECKING = False  # neither `typing` nor `collections` loads before the early answers
if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["AHEAD_CAP", "LINE_WAIT_SECONDS", "answer_ahead", "answer_listing_ahead", "otlp_export_wanted",
           "read_waiting", "write_listing", "write_whole"]

_READ = 1 << 16  # one read: an engine's first lines, the handshake and a little more
AHEAD_CAP = 1 << 20  # what the listing ahead reads of stdin, at most (the rest waits in the pipe)
LINE_WAIT_SECONDS = 0.2  # an engine lists right after its initialize is answered
_LINE_READ = 64 * 1024  # a longer line before the listing is not read: it is the runtime's
_PAGE_KEYS = frozenset({"_meta", "cursor"})


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


def answer_listing_ahead(ahead: Ahead, inputs: ListingInputs, greeting_seconds: float) -> Ahead:
    """After the `initialize` answer (`ahead.answered`): answer the engine's first
    `tools/list` from the listing snapshot when one is kept and its key is this start's,
    and each following page the engine asks for at once; `ahead` with what was read since,
    less the lines answered (see above). Waits only when this config's snapshot was kept
    under the same `prekey` (only the upstreams' answers can still differ): for each line,
    `LINE_WAIT_SECONDS`; for the upstreams' listings, `greeting_seconds` at most."""
    # the snapshot is read and checked whole before any wait (the upstreams are still
    # starting): once their answers are in, only its key is left to compare
    kept = read_kept(inputs) if ahead.answered and snapshot_expected(inputs) else None
    if kept is None or kept.prekey != inputs.prekey:
        return Ahead(ahead.read, ahead.answered, ListedAhead(inputs))
    read = bytearray(ahead.read)
    start = ahead.read.find(b"\n") + 1
    found = _next_listing(read, start, None, time.monotonic() + LINE_WAIT_SECONDS)
    key = inputs.key() if found is not None and inputs.all_in(greeting_seconds) else None
    pages = kept.pages if key is not None and kept.key == key else None
    if found is None or pages is None:
        return Ahead(bytes(read), True, ListedAhead(inputs))
    for number, (_, result) in enumerate(pages):
        begin, end, ident = found
        write_listing((b'{"jsonrpc":"2.0","id":', json_text(ident, ascii=False).encode(), b',"result":', result,
                       b"}\n"))
        del read[begin:end]
        if number + 1 == len(pages):
            break
        found = _next_listing(read, begin, pages[number + 1][0], time.monotonic() + LINE_WAIT_SECONDS)
        if found is None:  # the next page is the runtime's to answer
            break
    return Ahead(bytes(read), True, ListedAhead(inputs, pages))


def write_listing(parts: tuple[bytes, ...]) -> None:
    """Write a listing answered from the snapshot, given in `parts` (a mark of its own in the
    timeline): gathered by the kernel, not joined first (a megabyte's copy into fresh pages,
    about 0.6 ms here, in series with the upstreams' answers). Dropped as `write_whole` drops."""
    views = [memoryview(part) for part in parts if part]
    try:
        fd = sys.stdout.fileno()
        while views:
            done = os.writev(fd, views)
            while views and done >= len(views[0]):
                done -= len(views.pop(0))
            if done:
                views[0] = views[0][done:]
    except (OSError, ValueError, AttributeError):  # closed, or no stdout at all
        pass


def _next_listing(read: bytearray, start: int, cursor: str | None,
                  deadline: float) -> tuple[int, int, int | str] | None:
    """The first `tools/list` line after `start` in `read` (reading on, until `deadline`, as
    long as none is whole): its bounds and id when it asks for the page of `cursor` (None:
    page one) in a frame the strict decoder takes as it is; None otherwise, or when stdin
    ends or `AHEAD_CAP` is read."""
    while True:
        end = read.find(b"\n", start)
        if end < 0:
            if len(read) >= AHEAD_CAP or not _read_more(read, deadline):
                return None
            continue
        line = bytes(read[start:end])
        if b"tools/list" in line:  # the first that names it is the one, or none is
            frame = plain_request(line) if len(line) <= _LINE_READ else None
            if frame is None or frame["method"] != "tools/list":
                return None
            return _the_page(frame, cursor, start, end + 1)
        start = end + 1


def _the_page(frame: dict[str, object], cursor: str | None, start: int, end: int) -> tuple[int, int, int | str] | None:
    params, ident = frame.get("params", {}), frame.get("id")
    assert isinstance(params, dict)
    plain = (set(params) <= _PAGE_KEYS and params.get("cursor") == cursor
             and (params.get("_meta") is None or isinstance(params["_meta"], dict)))
    return (start, end, ident) if plain and isinstance(ident, int | str) else None


def _read_more(read: bytearray, deadline: float) -> bool:
    """Append what stdin holds within `deadline`; False at its end, an error or the deadline."""
    try:
        fd = sys.stdin.fileno()
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return False
        chunk = os.read(fd, min(_READ, AHEAD_CAP - len(read)))
    except (OSError, ValueError, AttributeError):
        return False
    read.extend(chunk)
    return bool(chunk)
