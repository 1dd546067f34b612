"""The listing snapshot: the face's first `tools/list` result, kept in the data folder under a
key that digests everything that result depends on, so the next start can answer the
engine's first listing before the runtime loads.

Owns the key (`ListingInputs.key`), the file (`mcp-listing-snapshot-<digest of the config's
path>` beside the health file, one per config: every page of the listing with the cursor
each is asked for with; private, replaced whole, capped at `SNAPSHOT_CAP`, its length and
CRC checked when read) and the trust epoch (`mcp-trust-epoch`), a random word the one door
of trust writes (`invalidate`, called by `sidecar.mounts.health.HealthFile.edit` whenever a
write changes pins a server had) and the key reads. Standard library only, and no OpenSSL
(`_blake2`): the entry point reads it before msgspec loads.

The key digests: the sidecar's version and interpreter, the config file's bytes, the
environment values that can shape a listing (the sidecar's own variables and any the config
names), the engine's `initialize` params, each early upstream's `initialize` and
`tools/list` answers as they came (their ids, random per start, left out; digested by each
greeting's thread as its listing arrives) and the trust epoch; what is known before any
upstream answers is the `prekey`, kept in the file's head too, so a start whose config,
engine or trust changed does not wait for the upstreams to find out. Only a plain `--config
PATH` stdio start whose every server started early is keyed
(`sidecar.upstream.plain_config`): no URL server, shared store, tracing or HTTP front.
Anything unreadable, oversized or corrupt reads as no snapshot.
"""

from __future__ import annotations

import os
import sys

from _blake2 import blake2b

from sidecar import __version__
from sidecar.plain_json import json_text

TYPE_CHECKING = False  # neither `typing` nor `collections` loads on the early path
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Protocol

__all__ = ["EPOCH_FILE", "SNAPSHOT_CAP", "SNAPSHOT_FILE", "Kept", "ListingInputs", "Page", "invalidate",
           "listing_environment", "read_kept", "read_snapshot", "snapshot_expected", "write_snapshot"]

SNAPSHOT_FILE = "mcp-listing-snapshot"
EPOCH_FILE = "mcp-trust-epoch"
SNAPSHOT_CAP = 16 << 20  # 3 x 425 tools list in about 3.6 MB
_EPOCH_CAP = 256
_MAGIC = b"omb-listing-snapshot 3"
_HEAD_CAP = 512
# The variables that can shape a listing besides the config: the sidecar's own names.
_OWN_PREFIXES = ("OMB_", "OGB_", "OTEL_")
_OWN_NAMES = ("HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "MALLOC_MMAP_THRESHOLD_")
_NOT_SHAPING = frozenset({"OMB_LOG_LEVEL"})  # what only the log reads


if TYPE_CHECKING:
    class GreetingLike(Protocol):
        """What the key reads of an early upstream's greeting (`sidecar.upstream.greeting`);
        for the type checker only."""

        ids: tuple[str, str]
        initialize: bytes | None
        tools: bytes | None
        replay: list[bytes]
        tail: bytes
        usable: bool
        timed_out: bool
        handed_over: bool
        answers_digest: bytes | None  # the two answers', ids blanked, made as they came

        def finished(self, timeout: float | None = None) -> bool: ...


def listing_environment(environ: Mapping[str, str], config: bytes) -> list[tuple[str, str]]:
    """The variables of `environ` that can shape a listing: the sidecar's own, and any whose
    name the config spells as a JSON string (a bot's `tokenEnv`, say), sorted."""
    return sorted((name, value) for name, value in environ.items()
                  if name not in _NOT_SHAPING and (name.startswith(_OWN_PREFIXES) or name in _OWN_NAMES
                                                   or (name and f'"{name}"'.encode(errors="replace") in config)))


class ListingInputs:
    """What one start's first listing depends on, gathered by the entry point: `prekey`,
    the digest of what is known before any upstream answers (made at once), and `key()`,
    with each upstream's answers, once every greeting is in (None while one is not, or when
    one cannot be keyed). `name`: the snapshot file of this config (one per config file, so
    two configs in one folder do not take turns)."""

    def __init__(self, folder: str, config_path: str, config: bytes, environment: Sequence[tuple[str, str]],
                 engine_params: object, greetings: Sequence[tuple[str, GreetingLike]]) -> None:
        self.folder = folder
        self.name = f"{SNAPSHOT_FILE}-{blake2b(config_path.encode(errors='replace'), digest_size=6).hexdigest()}"
        self.aliases = tuple(alias for alias, _ in greetings)
        self._greetings = list(greetings)
        self._key: str | None = None
        digest = blake2b(digest_size=32, person=b"omb-listing")
        engine = json_text(engine_params, ascii=False, sort_keys=True)
        for part in (__version__, sys.version, sys.executable, engine, *self.aliases):
            _add(digest, part.encode(errors="replace"))
        _add(digest, config)
        for name, value in environment:
            _add(digest, name.encode(errors="replace"))
            _add(digest, value.encode(errors="replace"))
        _add(digest, _read_small(os.path.join(folder, EPOCH_FILE), _EPOCH_CAP) or b"")
        self.prekey = digest.hexdigest()

    def all_in(self, timeout: float) -> bool:
        """Wait at most `timeout` seconds in all for every greeting to stop reading."""
        import time

        deadline = time.monotonic() + timeout
        return all(greeting.finished(max(0.0, deadline - time.monotonic())) for _, greeting in self._greetings)

    def key(self) -> str | None:
        """The digest of every input, once each greeting holds its two answers and nothing
        else (a notification, a question, a partial line: the listing may change after)."""
        if self._key is not None:
            return self._key
        digest = blake2b(self.prekey.encode(), digest_size=32, person=b"omb-listing")
        for alias, greeting in self._greetings:
            if not greeting.finished(0) or not _clean(greeting):
                return None
            assert greeting.answers_digest is not None
            _add(digest, alias.encode())
            _add(digest, greeting.answers_digest)
        self._key = digest.hexdigest()
        return self._key


def _clean(greeting: GreetingLike) -> bool:
    return (greeting.usable and not greeting.timed_out and not greeting.handed_over and not greeting.replay
            and not greeting.tail and greeting.initialize is not None and greeting.tools is not None
            and greeting.answers_digest is not None)


def _add(digest: blake2b, part: bytes) -> None:
    digest.update(len(part).to_bytes(8, "little"))
    digest.update(part)


def _read_small(path: str, cap: int) -> bytes | None:
    """The file's bytes when it is a regular file of at most `cap` bytes; else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        if size > cap:
            return None
        chunks, left = [], size + 1  # one byte more: a file that grew since is refused
        while left > 0:
            chunk = os.read(fd, left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return data if len(data) <= cap else None
    except OSError:
        return None
    finally:
        os.close(fd)


def snapshot_expected(inputs: ListingInputs) -> bool:
    """Whether this config's snapshot was kept under the same `prekey` (then only the
    upstreams' answers can still differ: worth waiting for them). Reads the head only."""
    try:
        with open(os.path.join(inputs.folder, inputs.name), "rb") as kept:
            head = kept.read(_HEAD_CAP).split(b"\n", 1)[0].split(b" ")
    except OSError:
        return False
    return len(head) == 7 and b" ".join(head[:2]) == _MAGIC and head[2] == inputs.prekey.encode()


Page = tuple[str | None, bytes]  # the cursor a page is asked for with (None: page one), its result


def _seal(body: bytes | memoryview) -> bytes:
    """A check of the body against a torn or altered file (who can write the data folder
    can write the pins too: the key, not this, is what a changed listing cannot match)."""
    from zlib import crc32

    return b"%08x" % crc32(body)


class Kept:
    """A snapshot file read whole and checked (its length, CRC and pages): the `prekey` and
    `key` it was kept under and its pages, page one first."""

    __slots__ = ("key", "pages", "prekey")

    def __init__(self, prekey: str, key: str, pages: list[Page]) -> None:
        self.prekey, self.key, self.pages = prekey, key, pages


def read_kept(inputs: ListingInputs) -> Kept | None:
    """This config's snapshot, whatever its key (the entry point reads it while the upstreams
    still start, and compares the key once their answers are in); None when there is none,
    or it is oversized, unreadable or corrupt."""
    data = _read_small(os.path.join(inputs.folder, inputs.name), SNAPSHOT_CAP)
    if data is None:
        return None
    end = data.find(b"\n")
    head = data[:end].split(b" ") if 0 < end <= _HEAD_CAP else []
    if len(head) != 7 or b" ".join(head[:2]) != _MAGIC or not head[6].isdigit():
        return None
    # the body read in place (each page copied once, out of `data`): with the collector's
    # mmap threshold every copy of a megabyte is fresh pages, about 0.6 ms here
    body, base = memoryview(data)[end + 1:], end + 1
    if head[4] != str(len(body)).encode() or head[5] != _seal(body):
        return None
    pages: list[Page] = []
    at = 0
    for _ in range(int(head[6])):
        line_end = data.find(b"\n", base + at) - base
        cursor, _, size = data[base + at:base + line_end].partition(b" ") if line_end > at else (b"", b"", b"")
        if not size.isdigit():
            return None
        start, at = line_end + 1, line_end + 1 + int(size)
        result = bytes(body[start:at])
        if len(result) != int(size) or not (result.startswith(b"{") and result.endswith(b"}")):
            return None
        pages.append((None if cursor == b"-" else cursor.decode(errors="replace"), result))
    if not pages or pages[0][0] is not None or at != len(body):
        return None
    return Kept(head[2].decode(errors="replace"), head[3].decode(errors="replace"), pages)


def read_snapshot(inputs: ListingInputs, key: str) -> list[Page] | None:
    """The pages kept for this config under `key`, page one first; None when there are
    none, or the file is another key's, oversized, unreadable or corrupt."""
    kept = read_kept(inputs)
    return kept.pages if kept is not None and kept.key == key else None


def write_snapshot(inputs: ListingInputs, key: str, pages: list[Page]) -> bool:
    """Keep `pages` (page one first) under `key`: a private file (0600 from its first byte)
    replaced whole; not fsynced (a file torn by a crash fails its digest and is ignored).
    False when over the cap, a cursor is not one word, or it cannot be written (the next
    start then lists as the runtime does)."""
    if any(cursor is not None and (not cursor or not cursor.isprintable() or " " in cursor or cursor == "-")
           for cursor, _ in pages):
        return False
    body = b"".join(b"%s %d\n%s" % ((cursor or "-").encode(), len(result), result) for cursor, result in pages)
    if len(body) > SNAPSHOT_CAP - 512:
        return False
    head = b" ".join((_MAGIC, inputs.prekey.encode(), key.encode(), str(len(body)).encode(), _seal(body),
                      str(len(pages)).encode()))
    target = os.path.join(inputs.folder, inputs.name)
    temporary = os.path.join(inputs.folder, f".{inputs.name}.{os.urandom(6).hex()}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            for part in (head + b"\n", body):
                view = memoryview(part)
                while view:
                    view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(temporary, target)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        return False
    return True


def invalidate(folder: str) -> None:
    """Trust changed in `folder` (pins a server had were replaced or forgotten): a new epoch,
    so no key made before matches, and the snapshot removed. Raises OSError when the epoch
    cannot be written (the caller's write of trust fails with it: never a stale snapshot)."""
    from pathlib import Path

    from sidecar.private_files import write_private

    write_private(Path(folder) / EPOCH_FILE, os.urandom(16).hex().encode())
    try:
        kept = [name for name in os.listdir(folder) if name.startswith(SNAPSHOT_FILE)]
    except OSError:
        return
    for name in kept:
        try:
            os.unlink(os.path.join(folder, name))
        except OSError:  # gone already; or kept, but under a key no start makes any more
            pass
