"""The stdio front's side of the listing snapshot (`sidecar.listing_snapshot`): what this
start's first listing was, kept for the next start, and the engine told when the one the
entry point sent from the snapshot was not the runtime's.

Owns `keep_first_listing`, set up for a stdio session whose start could be keyed (a plain
`--config PATH` start whose every server started early, `sidecar.wire.plain_hello.Ahead`):

- the entry point answered the engine's first `tools/list` from the snapshot: once the
  first start settled, the face's pages are compared with the kept ones; when they
  differ the engine gets `notifications/tools/list_changed` (it lists again, from the
  runtime) and the snapshot is replaced by the runtime's pages; until then the face's own
  `list_changed` (its servers arriving) is not said: the engine already holds the listing;
- it did not: once the face lists page one for the first time, every page of that
  listing is kept under this start's key, page one as the engine was sent it.

A page is kept only when every server of the key is mounted and ready at that moment (a
listing made while one was still starting or had failed is no function of the key), once
the engine's answer has left for the engine (see `_keep` for why on the loop's thread).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

from sidecar.catalog.layouts import Listing
from sidecar.hub import EngineSession, Face
from sidecar.listing_snapshot import Page, write_snapshot
from sidecar.upstream import lifecycle
from sidecar.wire.plain_hello import ListedAhead

__all__ = ["keep_first_listing"]

log = logging.getLogger(__name__)

_LIST_CHANGED = "notifications/tools/list_changed"
_DRAIN_POLL_SECONDS = 0.002  # how often the keeping looks whether the engine's answer has left
_DRAIN_WAIT_SECONDS = 2.0  # an engine slow to read: kept after this long all the same


def keep_first_listing(face: Face, session: EngineSession, listed: ListedAhead,
                       buffered: Callable[[], int] | None = None) -> Coroutine[Any, Any, None]:
    """Set the session up to keep its first listing (see above); the task to run: when the
    entry point sent one from the snapshot, the comparison; else the keeping of the first
    page the face lists, once `buffered` (the bytes not yet written to the engine) is 0."""
    if listed.sent is not None:
        return _compare(face, session, listed, listed.sent)
    seen: asyncio.Future[tuple[Listing, bytes] | None] = asyncio.get_running_loop().create_future()

    def first_page(page: bytes) -> None:
        if not seen.done():  # ready now, as page one is made: a later state is another listing
            seen.set_result((face.listing, page) if _all_ready(face, listed) else None)

    face.when_first_page(first_page)
    return _keep_first(face, listed, seen, buffered)


async def _keep_first(face: Face, listed: ListedAhead, seen: asyncio.Future[tuple[Listing, bytes] | None],
                      buffered: Callable[[], int] | None) -> None:
    """Keep the first page listed (and the pages after it, of the same listing) once the
    engine's answer has left: its megabyte is not held in the buffer behind the snapshot's
    digest and write (a few ms of the loop), nor page one encoded again. At most
    `_DRAIN_WAIT_SECONDS` waited; kept at once when the session ends meanwhile (cancelled:
    the front has flushed its answers by then)."""
    first = await seen
    if first is None:
        return
    listing, page = first
    try:
        await asyncio.sleep(0)  # the answer is in the transport by the next turn (the dispatcher writes it)
        deadline = time.monotonic() + _DRAIN_WAIT_SECONDS
        while buffered is not None and buffered() and time.monotonic() < deadline:
            await asyncio.sleep(_DRAIN_POLL_SECONDS)  # the transport tells of no "empty" moment
    finally:
        if face.listing is listing:  # else rebuilt since: not the listing page one was of
            try:
                _keep(listed, face.tools_pages(first=page))
            except Exception as exc:  # noqa: BLE001 (a task of the session's group: a fault here must not end it)
                log.warning("the listing snapshot was not kept (%s)", type(exc).__name__)


async def _compare(face: Face, session: EngineSession, listed: ListedAhead, sent: list[Page]) -> None:
    """Until the first start settles, the face's own news of its tools (the servers
    arriving) is not the engine's: it holds the listing that was sent. Then one judgement:
    the face's pages against the kept ones, and `list_changed` only when they differ."""
    admit = session.admit
    session.admit = lambda method: method != _LIST_CHANGED and admit(method)
    try:
        await face.wait_for_first_start()
    finally:
        session.admit = admit
    if face.closing:  # stopping: no listing to judge by
        return
    pages = face.tools_pages()
    if pages == sent:
        return
    log.info("the listing sent from the snapshot is not the runtime's: the engine is told to list again")
    session.notify(_LIST_CHANGED)
    if _all_ready(face, listed):
        _keep(listed, pages)


def _all_ready(face: Face, listed: ListedAhead) -> bool:
    """Whether the face's servers are exactly the key's, each ready now, and the face's
    listing made since (not stopping: a stopping face rebuilds no more)."""
    upstreams = list(face.pool)
    return (not face.closing and sorted(u.alias for u in upstreams) == sorted(listed.inputs.aliases)
            and all(lifecycle.is_ready(u.state) for u in upstreams))


def _keep(listed: ListedAhead, pages: list[Page]) -> None:
    """Keep `pages` under this start's key, on the loop's thread: a few ms once per start
    that lists anew (a digest of the listings, one write, no fsync), too little to hand to
    a thread."""
    key = listed.inputs.key()  # the greetings are in by now: the answers the supervisors took
    if key is not None and write_snapshot(listed.inputs, key, pages):
        log.debug("listing snapshot kept (%d pages, %d bytes)", len(pages), sum(len(page) for _, page in pages))
