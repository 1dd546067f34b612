"""How the sidecar learns that a 2026-07-28 (stateless) upstream's lists changed.

A session-era upstream says so on its session (`notifications/*/list_changed`), and the
supervisor re-reads that list. A stateless upstream has no session to say it on. At this
revision a `listChanged` flag in its capabilities means it serves `subscriptions/listen`,
so the sidecar keeps one listen stream open on it, asking for the kinds it flags; the
change notifications on that stream reach the supervisor on the same road as a session's
(the connection hands every server message to the face, which hands list changes to the
upstream's supervisor: re-read, then the face announces what the engine sees change).

The stream also carries `notifications/resources/updated` for the URIs engines' listen
streams want from this upstream (`WatchedUris`, kept by its supervisor across restarts):
when that set changes, the stream is closed (a cancel, which closes its HTTP answer) and
opened again with the new filter.

A stream that ends (gracefully or not) is opened again after a pause that doubles up to a
ceiling, and every list it covers is read again: there is no replay at this revision, so
a change made while no stream was open is found by reading. An upstream that flags no
kind, or refuses the method, is re-read every `RELIST_SECONDS` (the
`OMB_RELIST_SECONDS` environment variable, default 60): the bound on how long a change
can stay unseen. The face announces only a real change, so a re-read that finds the same
lists costs the engine nothing.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from sidecar.errors import METHOD_NOT_FOUND, SidecarError, UpstreamError, UpstreamUnavailable
from sidecar.settings import process_settings
from sidecar.upstream.connection import Connection

__all__ = ["RELIST_SECONDS", "WatchedUris", "follow_changes", "listen_filter", "relist_seconds"]

log = logging.getLogger(__name__)

RELIST_SECONDS = 60.0
REOPEN_FIRST, REOPEN_CEILING = 0.5, 30.0
# capability -> the listen filter's key for its list changes
_FILTER_KEYS = {"tools": "toolsListChanged", "prompts": "promptsListChanged", "resources": "resourcesListChanged"}

Reread = Callable[[str], Awaitable[None]]


def relist_seconds(environ: Mapping[str, str] | None = None) -> float:
    """The re-list bound: `OMB_RELIST_SECONDS` when it is a positive number, else the default."""
    raw = (process_settings().environ if environ is None else environ).get("OMB_RELIST_SECONDS", "")
    try:
        seconds = float(raw)
    except ValueError:
        return RELIST_SECONDS
    return seconds if 0 < seconds < math.inf else RELIST_SECONDS


def listen_filter(capabilities: dict[str, Any]) -> dict[str, bool]:
    """The `subscriptions/listen` filter for the kinds whose `listChanged` the upstream flags."""
    wanted: dict[str, bool] = {}
    for kind, key in _FILTER_KEYS.items():
        offered = capabilities.get(kind)
        if isinstance(offered, dict) and offered.get("listChanged") is True:
            wanted[key] = True
    return wanted


class WatchedUris:
    """The resource URIs the engines want updates of from one 2026-07-28 upstream, each
    counted by its holders (listen streams, session engines' subscriptions)."""

    def __init__(self) -> None:
        self._holders: dict[str, int] = {}
        self.changed = asyncio.Event()

    @property
    def uris(self) -> list[str]:
        return sorted(self._holders)

    def add(self, uri: str) -> None:
        self._holders[uri] = self._holders.get(uri, 0) + 1
        if self._holders[uri] == 1:
            self.changed.set()

    def discard(self, uri: str) -> None:
        held = self._holders.get(uri)
        if held is None:
            return
        if held > 1:
            self._holders[uri] = held - 1
        else:
            del self._holders[uri]
            self.changed.set()


def offers_subscriptions(capabilities: dict[str, Any]) -> bool:
    resources = capabilities.get("resources")
    return isinstance(resources, dict) and resources.get("subscribe") is True


def _kinds(capabilities: dict[str, Any]) -> list[str]:
    return [kind for kind in _FILTER_KEYS if kind in capabilities]


async def follow_changes(conn: Connection, capabilities: dict[str, Any], reread: Reread,
                         watched: WatchedUris | None = None,
                         sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
    """Until cancelled or the connection ends: listen on the upstream when it offers it,
    else re-read its lists on the bound."""
    kinds = _kinds(capabilities)
    if not kinds:
        return
    wanted = listen_filter(capabilities)
    watched = watched if watched is not None and offers_subscriptions(capabilities) else WatchedUris()
    if (wanted or offers_subscriptions(capabilities)) and \
            await _listen_while_offered(conn, _Filter(wanted, watched), kinds, reread, sleep):
        return  # the connection ended: its supervisor starts another, which follows anew
    bound = relist_seconds()
    log.info("upstream '%s' offers no subscriptions/listen: its lists are re-read every %gs", conn.alias, bound)
    while conn.closed_reason is None:
        await sleep(bound)
        await _reread_all(kinds, reread)


class _Filter:
    """The listen filter: the list kinds, and the URIs watched now."""

    def __init__(self, kinds: dict[str, bool], watched: WatchedUris) -> None:
        self.kinds, self.watched = kinds, watched

    def now(self) -> dict[str, Any]:
        self.watched.changed.clear()
        uris = self.watched.uris
        return {**self.kinds, "resourceSubscriptions": uris} if uris else dict(self.kinds)


async def _one_stream(conn: Connection, wanted: _Filter) -> bool:
    """One listen stream, until it ends or the watched URIs change; True for the latter."""
    stream = asyncio.ensure_future(conn.request("subscriptions/listen", {"notifications": wanted.now()}))
    changed = asyncio.ensure_future(wanted.watched.changed.wait())
    try:
        await asyncio.wait((stream, changed), return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        stream.cancel()
        raise
    finally:
        changed.cancel()
    if stream.done():
        await stream  # its end, or its error
        return False
    stream.cancel()  # the request's cancel closes the stream upstream
    await asyncio.gather(stream, return_exceptions=True)
    return True


async def _listen_while_offered(conn: Connection, wanted: _Filter, kinds: list[str], reread: Reread,
                                sleep: Callable[[float], Awaitable[None]]) -> bool:
    """One listen stream after another; True when the connection ended, False when the
    upstream refused the method (the caller then re-lists on the bound)."""
    pause = REOPEN_FIRST
    while conn.closed_reason is None:
        try:
            if await _one_stream(conn, wanted):
                continue  # a new filter: opened again at once, nothing missed that the lists would show
            pause = REOPEN_FIRST  # a graceful close: the server ended it on purpose
        except UpstreamError as exc:
            if exc.code == METHOD_NOT_FOUND:
                return False
            log.info("upstream '%s': its listen stream ended (%s); opened again in %gs", conn.alias, exc, pause)
        except UpstreamUnavailable:
            return True
        except SidecarError as exc:
            log.info("upstream '%s': its listen stream ended (%s)", conn.alias, exc)
        await sleep(pause)
        pause = min(pause * 2, REOPEN_CEILING)
        await _reread_all(kinds, reread)  # what changed while no stream was open
    return True


async def _reread_all(kinds: list[str], reread: Reread) -> None:
    for kind in kinds:
        await reread(kind)
