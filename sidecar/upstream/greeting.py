"""An early stdio upstream's handshake and first `tools/list`, in a thread, while the
sidecar's own runtime still loads.

Owns the conversation with a process started early (`sidecar.upstream.spawn`) until its
supervisor adopts it: `initialize` sent at once, and once it is answered (the protocol's
order), `notifications/initialized` and a first `tools/list`, exactly what the supervisor
would send first. The answers wait as lines; the supervisor decodes and checks them as it
would have (`sidecar.upstream.supervisor`), so the upstream's start, its handshake and the
building of its listing overlap the sidecar's imports instead of following them.

Refuses what it cannot hand over as if nothing happened: a request from the server other
than `ping` before its `initialize` answer, a line over the line cap, or the end of the
output first make the greeting unusable, and the process is then replaced by a fresh one
the supervisor starts itself. Lines that are none of its two answers (notifications, junk,
stray answers) are kept in order and fed to the connection once it exists. Standard
library only, and neither `json`, `typing` nor `threading` (`sidecar.plain_json` reads and
writes; the thread is `_thread`'s): it runs before msgspec is loaded, beside the early answers.
"""

from __future__ import annotations

import _thread
import os
import select
import time

from sidecar import __version__
from sidecar.plain_json import json_document, json_text
from sidecar.wire.versions import HANDSHAKE_VERSIONS

TYPE_CHECKING = False  # `typing` waits for the runtime
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import IO, Any, Protocol

__all__ = ["CLIENT_CAPABILITIES", "CLIENT_INFO", "Greeting"]

# What the sidecar says of itself in `initialize` (sidecar.upstream.handshake sends the same).
# URL-mode elicitation is declared too: the face relays a URL-mode question only to an
# engine that declared that mode, else refuses it naming the mode (sidecar.hub.face).
CLIENT_CAPABILITIES: dict[str, object] = {"roots": {"listChanged": True}, "sampling": {},
                                          "elicitation": {"form": {}, "url": {}}}
CLIENT_INFO = {"name": "omb-sidecar", "version": __version__}
LINE_CAP = 160 * 1024 * 1024  # sidecar.wire.framing.DEFAULT_LINE_CAP (an early entry sets no other)
_SMALL = 64 * 1024  # a line this short is read to tell a notification from a request
_POLL = 0.05  # how often a waiting read looks at the deadline


if TYPE_CHECKING:
    class Piped(Protocol):
        """What a greeting reads of a started process (`sidecar.upstream.spawn.Process`)."""

        @property
        def stdin(self) -> IO[bytes] | None: ...

        @property
        def stdout(self) -> IO[bytes] | None: ...


class Greeting:
    """The thread and what it read: `initialize` and `tools` (the two answer lines, or
    None), `replay` (every other whole line, in order), `tail` (a partial last line), `usable`,
    `timed_out` and `handed_over` (stopped at a question from the server)."""

    def __init__(self, popen: Piped, seconds: float) -> None:
        """Greet `popen` now, in a thread that stops reading once both answers are in, or
        after `seconds` (the start timeout: it then counts as not answering in time)."""
        assert popen.stdin is not None and popen.stdout is not None
        self._in, self._out = popen.stdin.fileno(), popen.stdout.fileno()
        nonce = os.urandom(6).hex()
        self.ids = (f"omb-early-{nonce}-1", f"omb-early-{nonce}-2")
        self._tools_marker = json_text(self.ids[1]).encode()
        self.initialize: bytes | None = None
        self.tools: bytes | None = None
        self.replay: list[bytes] = []
        self.tail = b""  # a partial line read last: the line framer gets it first
        self.usable = True
        self.timed_out = False
        self.handed_over = False  # stopped early, the rest left to the connection
        self.answers_digest: bytes | None = None  # set with `tools` (see `_Blanked`)
        self._prefix = json_text(self.ids[0]).encode()[:-2]  # both ids, quoted, but their last digit
        self._answers: Any = None  # the digest of the `initialize` answer, once it is in
        self._line: _Blanked | None = None  # the digest of the line being read, after it
        self._deadline = time.monotonic() + seconds
        # held until the thread stops reading; a bare thread and lock: `threading` loads
        # `functools` and `collections` (about 5 ms), and the runtime never joins this one
        self._done = _thread.allocate_lock()
        self._done.acquire()
        self._guard = _thread.allocate_lock()  # over `_then` and `_over`, between the thread and `when_finished`
        self._then: Callable[[], object] | None = None
        self._over = False
        _thread.start_new_thread(self._run, ())

    def finished(self, timeout: float | None = None) -> bool:
        """Wait until the thread has stopped reading (True), or `timeout` passed."""
        if not self._done.acquire(True, -1 if timeout is None else max(0.0, timeout)):
            return False
        self._done.release()
        return True

    def when_finished(self, then: Callable[[], object]) -> None:
        """Call `then` once the thread has stopped reading: now, when it has, else from the
        thread itself as it stops (`then` hands over to the caller's loop: no thread of the
        loop's executor waits on the greeting meanwhile). One `then` at a time; a fault in
        it is its own (the thread ignores it)."""
        with self._guard:
            if not self._over:
                self._then = then
                return
        then()

    def _run(self) -> None:
        try:
            self._send({"jsonrpc": "2.0", "id": self.ids[0], "method": "initialize",
                        "params": {"protocolVersion": HANDSHAKE_VERSIONS[-1], "capabilities": CLIENT_CAPABILITIES,
                                   "clientInfo": CLIENT_INFO}})
            self._read()
        except OSError:  # the process is gone: the supervisor, starting afresh, says so
            self.usable = False
        finally:
            self._done.release()
            with self._guard:
                self._over = True
                then, self._then = self._then, None
            if then is not None:
                try:
                    then()
                except Exception:  # noqa: BLE001 (the waiter's own hand-over: nothing to tell from this thread)
                    pass

    def _send(self, message: dict[str, object]) -> None:
        data = memoryview(json_text(message).encode() + b"\n")
        while data:
            data = data[os.write(self._in, data):]

    def _read(self) -> None:
        """Take each whole line as it comes; a line arriving in pieces is joined once (a
        listing of a megabyte comes in pipe-sized reads: no copy per read)."""
        pieces: list[bytes] = []  # the line being read
        rest = b""
        while self._reading():
            chunk, start = self._chunk(), 0
            while self._reading():
                end = chunk.find(b"\n", start)
                if end < 0:
                    pieces.append(chunk[start:])
                    self._digesting(pieces[-1])
                    start = len(chunk)
                    break
                pieces.append(chunk[start:end])
                self._digesting(pieces[-1])
                start = end + 1
                self._take(b"".join(pieces))
                pieces = []
            rest = chunk[start:]
        *more, self.tail = (b"".join(pieces) + rest).split(b"\n")
        self.replay.extend(more)

    def _reading(self) -> bool:
        return self.tools is None and self.usable and not (self.timed_out or self.handed_over)

    def _chunk(self) -> bytes:
        """The next bytes of the output; marks the greeting unusable or timed out instead."""
        while True:
            left = self._deadline - time.monotonic()
            if left <= 0:
                self.timed_out = True
                return b""
            if select.select([self._out], [], [], min(left, _POLL))[0]:
                break
        chunk = os.read(self._out, 1 << 20)
        if not chunk:
            self.usable = False
        return chunk

    def _digesting(self, piece: bytes) -> None:
        """Feed a piece of the line being read, once `initialize` is answered, to that line's
        digest: a listing of a megabyte is digested as it arrives, not after it."""
        if self._answers is not None:
            if self._line is None:
                self._line = _Blanked(self._answers.copy(), self._prefix)
            self._line.feed(piece)

    def _take(self, line: bytes) -> None:
        fed, self._line = self._line, None
        if len(line) > LINE_CAP:
            self.usable = False
        elif self.initialize is not None and self._tools_marker in line:
            self.answers_digest = self._digest(fed if fed is not None else self._fed(line))
            self.tools = line
        else:
            self._other(line)

    def _digest(self, tools: _Blanked) -> bytes:
        """The two answers' digest as they came, their ids (random per start) blanked: what
        the listing snapshot's key reads of this upstream (`sidecar.listing_snapshot`),
        made here, in the greeting's own thread, while the other upstreams still answer."""
        digest: bytes = tools.close().digest()
        return digest

    def _fed(self, line: bytes) -> _Blanked:
        blanked = _Blanked(self._answers.copy(), self._prefix)
        blanked.feed(line)
        return blanked

    def _answered(self, initialize: bytes) -> None:
        from _blake2 import blake2b

        self.initialize = initialize
        blanked = _Blanked(blake2b(digest_size=32, person=b"omb-greeting"), self._prefix)
        blanked.feed(initialize)
        self._answers = blanked.close()

    def _other(self, line: bytes) -> None:
        """A line that is not the `tools/list` answer: the `initialize` answer, a ping to
        answer now, or a line the connection reads later."""
        message = _small_object(line)
        ident = message.get("id") if message is not None else None
        if message is not None and ident == self.ids[0] and "method" not in message and self.initialize is None:
            self._answered(line)
            self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            self._send({"jsonrpc": "2.0", "id": self.ids[1], "method": "tools/list"})
        elif message is not None and ident is not None and message.get("method") == "ping":
            self._send({"jsonrpc": "2.0", "id": ident, "result": {}})
        elif message is not None and ident is not None and "method" in message:
            # a question to the sidecar (roots/list, say): the connection answers it, and the
            # supervisor asks for the tools itself; before `initialize` is answered, a fresh start does
            self.replay.append(line)
            self.handed_over = self.initialize is not None
            self.usable = self.handed_over
        else:
            self.replay.append(line)


class _Blanked:
    """A digest fed one line in pieces as they are read, with each of a greeting's two ids
    in it (`prefix`: both, quoted, less their last digit and quote) blanked to `""`, taken
    left to right; then the line's length as blanked (`close`). The same line cut into any
    pieces gives the same digest (a possible id's start is held back until it is whole)."""

    __slots__ = ("_digest", "_held", "_prefix", "_size", "_span")

    def __init__(self, digest: Any, prefix: bytes) -> None:
        self._digest, self._prefix, self._span = digest, prefix, len(prefix) + 2
        self._held = b""
        self._size = 0

    def feed(self, piece: bytes) -> None:
        data = self._held + piece if self._held else piece
        view, at, end = memoryview(data), 0, len(data)
        while (hit := data.find(self._prefix, at)) >= 0 and hit + self._span <= end:
            if data[hit + self._span - 2:hit + self._span] in (b'1"', b'2"'):
                self._put(view[at:hit])
                self._put(b'""')
                at = hit + self._span
            else:
                self._put(view[at:hit + 1])
                at = hit + 1
        keep = max(at, end - self._span + 1)  # an id starting here would not be whole yet
        self._put(view[at:keep])
        self._held = data[keep:]

    def close(self) -> Any:
        """The digest, the held tail and the blanked line's length added."""
        self._put(self._held)
        self._held = b""
        self._digest.update(self._size.to_bytes(8, "little"))
        return self._digest

    def _put(self, part: bytes | memoryview) -> None:
        self._digest.update(part)
        self._size += len(part)


def _small_object(line: bytes) -> dict[str, object] | None:
    if len(line) > _SMALL:
        return None
    try:
        message = json_document(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None
