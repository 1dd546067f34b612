"""Private files: the config, the health records and the token file hold values a person
must not leak, so each is written whole, in one step, 0600 from its first byte.

Owns the atomic replace (`write_private`: a temporary file beside the target, fsynced,
renamed over it, the folder fsynced) and the lock beside a file (`lock_beside`: an
exclusive `flock` on `.<name>.lock`, so two processes editing one file take turns), and
the one warning for a secret file a person made that others can read (`warn_if_shared`).
Refuses nothing: an `OSError` is the caller's to report.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

__all__ = ["lock_beside", "warn_if_shared", "write_private"]

log = logging.getLogger(__name__)
_warned: set[str] = set()  # each file is named once per process, however often it is read


def write_private(path: Path, data: bytes) -> None:
    """Replace `path` with `data` in one step; the file is 0600 from its first byte."""
    temporary = path.with_name(f".{path.name}.{os.urandom(6).hex()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    with contextlib.suppress(OSError):
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


@contextlib.contextmanager
def lock_beside(path: Path) -> Iterator[None]:
    """Hold the exclusive lock on `.<name>.lock` beside `path` (its folder made if need be)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.with_name(f".{path.name}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def warn_if_shared(path: str | Path, what: str) -> None:
    """One WARNING when the group or others may read the secret file `path` (`what` names
    it: "the token file"), with the command that fixes it. A file that cannot be looked at
    is the reader's error to report, not this one's."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    shown = str(path)
    if not mode & (stat.S_IRWXG | stat.S_IRWXO) or shown in _warned:
        return
    _warned.add(shown)
    log.warning("%s %s can be read by other users (mode %s): run `chmod 600 %s`", what, shown,
                oct(stat.S_IMODE(mode))[2:].rjust(4, "0"), shown)
