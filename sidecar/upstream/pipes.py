"""Handing a pipe to the event loop (a stdio upstream's three, the engine's stdin and
stdout) so that its descriptor is closed exactly once, by the transport alone.

Owns one rule. asyncio's own loop keeps the file object it is given and closes it (once)
when the transport closes. uvloop (0.23.0, the one installed; MagicStack/uvloop issue 763,
its fix still open as pull request 764) gives the file object's *number* to libuv, which
closes that number itself, and then closes the file object too: the same number is closed
twice. A thread that opens a file between the two closes (the pin writer, a health-file
write, a greeting thread) is handed that number and has it closed under it; its writes then
fail with EBADF, or land in whatever takes the number next.

So a uvloop transport gets a duplicate of the descriptor that only libuv closes, wrapped
in an object whose `close` closes nothing, and our file object is closed at once, while
nothing else can take its number. asyncio's loop gets the file object itself, as before.
"""

from __future__ import annotations

import os
import sys
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio

__all__ = ["for_the_loop"]


class _LibuvOwned:
    """A descriptor libuv owns: `fileno` for uvloop to hand it to libuv, and a `close`
    (uvloop calls it after libuv closed the number) that leaves the number alone."""

    __slots__ = ("_fd",)

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def fileno(self) -> int:
        return self._fd

    def close(self) -> None:
        """Nothing: libuv closed the descriptor already, and its number may be another's now."""

    def __repr__(self) -> str:
        return f"<pipe descriptor {self._fd} owned by the loop>"


def for_the_loop(loop: asyncio.AbstractEventLoop, stream: IO[bytes]) -> object:
    """What to pass to `loop.connect_read_pipe`/`connect_write_pipe` for `stream`, a pipe
    of ours: the stream itself on asyncio's loop (its transport closes it); on uvloop a
    duplicate only the transport closes, `stream` being closed here and now. Once this is
    called the stream is the transport's: nobody else reads, writes or closes it."""
    if not _libuv_closes_descriptors(loop):
        return stream
    duplicate = os.dup(stream.fileno())  # not inheritable, as every descriptor Python makes
    stream.close()
    return _LibuvOwned(duplicate)


def _libuv_closes_descriptors(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether `loop` is uvloop's (only a process that loaded uvloop can run one)."""
    uvloop = sys.modules.get("uvloop")
    return uvloop is not None and isinstance(loop, uvloop.Loop)
