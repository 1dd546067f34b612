"""Per-resource updates for `subscriptions/listen` streams (2026-07-28's replacement for
`resources/subscribe`), carried from upstreams of either era.

Owns the subscriptions the sidecar holds upstream on behalf of open listen streams: a
stream asking for `resourceSubscriptions` gets each URI whose owning upstream offers
`resources.subscribe` subscribed there, once per URI whatever the number of streams
asking (counted), and unsubscribed when the last stream asking for it ends. On a session
that is `resources/subscribe`; a 2026-07-28 upstream has the URI added to the filter of
the sidecar's own listen stream on it (`sidecar.upstream.listening.WatchedUris`). A URI
no upstream can subscribe for (unknown, an upstream without the capability, a refusal)
is left out of what the stream is told is honoured, as the revision asks of a server
that cannot honour part of a filter. The upstream's `notifications/resources/updated` reaches, through
the face, the sessions and streams that asked for its URI only. A server that restarts
has forgotten its subscriptions: once it is ready on a new connection, the URIs still
held there are subscribed again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Iterable
from typing import Any

from sidecar.errors import SidecarError
from sidecar.hub.face import Face
from sidecar.hub.notices import subscribers
from sidecar.upstream import Connection, Upstream, lifecycle
from sidecar.wire.versions import MODERN_VERSION

__all__ = ["ResourceSubscriptions", "asked_uris", "watched_on_stateless"]

log = logging.getLogger(__name__)

MAX_URIS = 64  # a stream's filter past this is honoured for its first 64 URIs only
SUBSCRIBE_SECONDS = 10.0


def asked_uris(wanted: object) -> list[str]:
    """The URIs a listen filter asks updates for (strings only, each once, at most MAX_URIS)."""
    asked = wanted.get("resourceSubscriptions") if isinstance(wanted, dict) else None
    if not isinstance(asked, list):
        return []
    return list(dict.fromkeys(uri for uri in asked if isinstance(uri, str)))[:MAX_URIS]


def watched_on_stateless(upstream: Upstream, uri: str, subscribe: bool) -> bool:
    """A session engine's `resources/subscribe` (or unsubscribe) to a 2026-07-28 upstream,
    which has no such method: the URI joins (or leaves) the filter of the sidecar's own
    listen stream on it. False for an upstream on a session (the request goes on to it)."""
    if upstream.info is None or upstream.info.protocol_version != MODERN_VERSION:
        return False
    (upstream.watched_uris.add if subscribe else upstream.watched_uris.discard)(uri)
    return True


class ResourceSubscriptions:
    """The upstream subscriptions of one face's listen streams, counted by (upstream, URI)."""

    def __init__(self, face: Face) -> None:
        self.face = face
        self._held: dict[tuple[str, str], int] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._connections: dict[str, Connection] = {}  # alias -> the connection its subscriptions were made on
        face.watchers.append(self._upstream_changed)

    async def take(self, uris: Iterable[str], honoured: list[str]) -> None:
        """Subscribe upstream to each URI not held yet; each honoured URI is appended to
        `honoured` as soon as it is held (what `release` is given back)."""
        for uri in uris:
            alias = await self._subscribed(uri)
            if alias is not None:
                self._held[(alias, uri)] = self._held.get((alias, uri), 0) + 1
                honoured.append(uri)

    def release(self, uris: Iterable[str]) -> None:
        """A stream ended: the URIs no other stream holds are unsubscribed upstream (in the background)."""
        for uri in uris:
            key = next((k for k in self._held if k[1] == uri), None)
            if key is None:
                continue
            self._held[key] -= 1
            if self._held[key] <= 0:
                del self._held[key]
                self._unsubscribe(*key)

    def _unsubscribe(self, alias: str, uri: str) -> None:
        upstream = self.face.pool.get(alias)
        if upstream is None or any(subscribers(self.face.sessions, uri)):  # an engine session still asks for it
            return
        if not watched_on_stateless(upstream, uri, subscribe=False):
            self._spawn(self._send(alias, "resources/unsubscribe", uri))

    def _upstream_changed(self, upstream: Upstream) -> None:
        """An upstream ready on a new connection (a restart) gets its held URIs subscribed again."""
        conn, alias = upstream.connection, upstream.alias
        if conn is None or not lifecycle.is_ready(upstream.state) or alias not in self._connections:
            return
        if self._connections[alias] is not conn:
            self._connections[alias] = conn
            self._spawn(self._resubscribe(alias))

    async def _resubscribe(self, alias: str) -> None:
        for held_alias, uri in list(self._held):
            if held_alias == alias:
                await self._send(alias, "resources/subscribe", uri)

    def _spawn(self, job: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(job)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _subscribed(self, uri: str) -> str | None:
        """The alias of the upstream now subscribed to `uri` for us, or None."""
        try:
            upstream = self.face.find_resource_upstream(uri)
        except SidecarError:
            return None
        offered = upstream.capabilities.get("resources")
        if not (isinstance(offered, dict) and offered.get("subscribe") is True):
            return None
        if upstream.info is None:
            return None
        if (upstream.alias, uri) in self._held:  # held for another stream already: counted, not sent again
            return upstream.alias
        if watched_on_stateless(upstream, uri, subscribe=True):  # its listen stream opens again with the URI
            return upstream.alias
        return upstream.alias if await self._send(upstream.alias, "resources/subscribe", uri) else None

    async def _send(self, alias: str, method: str, uri: str) -> bool:
        upstream = self.face.pool.get(alias)
        if upstream is None:
            return False
        try:
            conn = upstream.ready_connection()
            await conn.request(method, {"uri": uri}, deadline=SUBSCRIBE_SECONDS)
        except SidecarError as exc:
            log.info("upstream '%s': %s %s failed: %s", alias, method, uri, exc)
            return False
        if method == "resources/subscribe":
            self._connections[alias] = conn
        return True
