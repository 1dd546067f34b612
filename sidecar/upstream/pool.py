"""The upstream pool: every configured upstream, supervised side by side.

Owns the supervisors' task group. Each upstream starts at once and independently; the
pool reports every change of state or listing through one callback, so the face can
rebuild its catalog, and hands what the upstreams ask or announce to one peer (the hub,
which `listen`s once it is built). Upstreams that finish their first start while others'
first listings are still being prepared, or (started early, before the runtime loaded)
while other early ones are still on their first start, are told together, once the last
of them is in (one rebuild for an arrival of several, as at a start with early greetings). How each upstream's transport is opened is given at
construction (`open_channel`, or in-memory channels in the tests' harness).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any

from sidecar.config import ServerConfig
from sidecar.errors import METHOD_NOT_FOUND
from sidecar.upstream import lifecycle
from sidecar.upstream.channel import ChannelOpener
from sidecar.upstream.connection import Connection, PeerHandler
from sidecar.upstream.supervisor import Prepare, Upstream
from sidecar.upstream.transports import open_channel
from sidecar.wire import UpstreamFrame

__all__ = ["Pool"]


class Pool:
    def __init__(
        self,
        servers: Sequence[ServerConfig],
        start_timeout: float,
        opener: ChannelOpener = open_channel,
        early: Collection[str] = (),
        early_wait: float = 0.0,
    ) -> None:
        """`early`: the upstreams whose processes started before the runtime loaded (their
        first listings come close together): one that is ready first waits for the others
        still on their first start, at most `early_wait` seconds from `run` (the face's
        listing wait: an engine's first listing waits for them anyway), and they are told
        together."""
        self._on_change: Callable[[Upstream], None] = _unheard
        self._on_arrivals: Callable[[Sequence[Upstream]], None] | None = None
        self._held: list[Upstream] = []  # first starts ready while others' first listings were being prepared
        self._peer: PeerHandler | None = None
        self._prepare: Prepare | None = None
        self._preparing: dict[str, asyncio.Event] = {}  # first listings being prepared, by alias
        self._start_timeout, self._open = start_timeout, opener
        self.upstreams: dict[str, Upstream] = {s.alias: self._upstream(s) for s in servers}
        self._group: asyncio.TaskGroup | None = None
        self._tasks: dict[str, asyncio.Task[None]] = {}
        # Set once an upstream is past its first start (ready, failed or stopped).
        self._first_start = {alias: asyncio.Event() for alias in self.upstreams}
        self._early, self._early_wait = frozenset(early), early_wait
        self._early_ends: float | None = None  # the loop's time the wait for early ones ends

    def _upstream(self, server: ServerConfig) -> Upstream:
        return Upstream(server, self, self._changed, self._start_timeout, self._open, self._prepared)

    def listen(self, peer: PeerHandler, on_change: Callable[[Upstream], None], prepare: Prepare | None = None,
               on_arrivals: Callable[[Sequence[Upstream]], None] | None = None) -> None:
        """Who hears the upstreams: `peer` their requests and notifications, `on_change`
        every change of state or listing, `prepare` each new tool listing first (awaited
        before `on_change` hears of it), `on_arrivals` several changes told at once (first
        starts that arrived together; without it, `on_change` hears each). Set once, before `run`."""
        self._peer, self._on_change, self._prepare, self._on_arrivals = peer, on_change, prepare, on_arrivals

    async def _prepared(self, alias: str, tools: list[dict[str, Any]]) -> None:
        if self._prepare is None:
            return
        if not self.starting(alias):
            await self._prepare(alias, tools)
            return
        done = self._preparing[alias] = asyncio.Event()  # a first listing: `wait_prepared` waits for it
        try:
            await self._prepare(alias, tools)
        finally:
            done.set()
            if self._preparing.get(alias) is done:
                del self._preparing[alias]

    async def wait_prepared(self) -> None:
        """Until every first listing already read is prepared (it is then listed, as the
        listing wait promised for a listing that came within it)."""
        for done in list(self._preparing.values()):
            await done.wait()

    def upstream_notification(self, conn: Connection, frame: UpstreamFrame) -> None:
        if self._peer is not None:
            self._peer.upstream_notification(conn, frame)

    def upstream_request(self, conn: Connection, frame: UpstreamFrame) -> None:
        if self._peer is not None:
            self._peer.upstream_request(conn, frame)
        elif frame.id is not None:
            conn.respond_error(frame.id, METHOD_NOT_FOUND, f"the sidecar does not relay {frame.method}")

    def _changed(self, upstream: Upstream) -> None:
        if self._arrives_with_others(upstream):
            self._held.append(upstream)  # told with the last of them: still "starting" to `starting` and `settled`
            return
        if not lifecycle.is_starting(upstream.state):
            self._first_start[upstream.alias].set()
        if not self._held:
            self._on_change(upstream)
            return
        self._tell_held([upstream])

    def _tell_held(self, last: list[Upstream]) -> None:
        arrived, self._held = [*self._held, *last], []
        for each in arrived[:len(arrived) - len(last)]:
            if each.alias in self._first_start:
                self._first_start[each.alias].set()
        if self._on_arrivals is not None:
            self._on_arrivals(arrived)
        else:
            for each in arrived:
                self._on_change(each)

    def _early_wait_over(self) -> None:
        """The wait for early upstreams ended: those held for it are told (no first listing
        of another is being prepared, else they wait for that one as before)."""
        if self._held and not self._preparing:
            self._tell_held([])

    def _arrives_with_others(self, upstream: Upstream) -> bool:
        """A first start that ends ready while another upstream's first listing is still
        being prepared, or, for an early upstream within the wait, while another early one is
        still on its first start: it is told once that one is in too (a first listing being
        prepared, and a first start, always end in a change of their upstream, which tells
        both; the wait's end tells those held for an early one)."""
        event = self._first_start.get(upstream.alias)
        if event is None or event.is_set() or not lifecycle.is_ready(upstream.state):
            return False
        if any(alias != upstream.alias for alias in self._preparing):
            return True
        return (upstream.alias in self._early and self._early_ends is not None
                and asyncio.get_running_loop().time() < self._early_ends
                and any(self._first_starting(alias) for alias in self._early if alias != upstream.alias))

    def _first_starting(self, alias: str) -> bool:
        found = self.upstreams.get(alias)
        return found is not None and lifecycle.is_starting(found.state) and not self._held_back(alias)

    def _held_back(self, alias: str) -> bool:
        return any(upstream.alias == alias for upstream in self._held)

    def starting(self, alias: str) -> bool:
        """Still on its first start, as the engine sees it (ready but held back with others counts)."""
        upstream = self.upstreams.get(alias)
        return upstream is not None and (lifecycle.is_starting(upstream.state) or self._held_back(alias))

    async def wait_first_start(self, alias: str | None = None, limit: float | None = None) -> None:
        """Wait until `alias` (or every upstream) is past its first start, at most `limit` s."""
        if alias is not None and alias not in self._first_start:
            return
        events = [self._first_start[alias]] if alias is not None else list(self._first_start.values())
        if limit is None:
            limit = max((u.start_timeout for u in self.upstreams.values()), default=0.0)
        try:
            async with asyncio.timeout(limit):
                for event in events:
                    await event.wait()
        except TimeoutError:
            pass  # past `limit`, the listing goes on with what has started

    async def run(self) -> None:
        """Supervise every upstream until cancelled; on cancel, every child is stopped."""
        if self._early and self._early_wait > 0:
            loop = asyncio.get_running_loop()
            self._early_ends = loop.time() + self._early_wait
            loop.call_at(self._early_ends, self._early_wait_over)
        async with asyncio.TaskGroup() as group:
            self._group = group
            for upstream in self.upstreams.values():
                self._supervise(upstream)
            await asyncio.Event().wait()  # upstreams may join later (`add`)

    def _supervise(self, upstream: Upstream) -> None:
        assert self._group is not None
        self._tasks[upstream.alias] = self._group.create_task(upstream.run(), name=f"upstream {upstream.alias}")

    def add(self, server: ServerConfig) -> Upstream:
        """Start supervising one more upstream (a server that recovered); the pool must run."""
        if server.alias in self.upstreams:
            return self.upstreams[server.alias]
        upstream = self.upstreams[server.alias] = self._upstream(server)
        self._first_start[server.alias] = asyncio.Event()
        self._supervise(upstream)
        return upstream

    async def remove(self, alias: str) -> None:
        """Stop one upstream (its child stopped in order) and forget it; the others go on."""
        task = self._tasks.pop(alias, None)
        if task is not None:
            task.cancel()
            await asyncio.wait([task])
        self.upstreams.pop(alias, None)  # its stop already told the face (state "stopped")
        self._first_start.pop(alias, None)

    def get(self, alias: str) -> Upstream | None:
        return self.upstreams.get(alias)

    def __iter__(self) -> Iterator[Upstream]:
        return iter(self.upstreams.values())

    def ready(self) -> list[Upstream]:
        return [u for u in self.upstreams.values() if lifecycle.is_ready(u.state)]

    def listed(self) -> list[Upstream]:
        """Upstreams whose tools the engine sees: the ready ones, and those that were ready
        and are coming back (their last listing stays, so a call gets "is restarting", not
        "unknown tool", and the engine's list does not churn with every crash)."""
        return [u for u in self.upstreams.values()
                if lifecycle.is_ready(u.state) or (lifecycle.coming_back(u.state) and u.info is not None)]

    def settled(self) -> bool:
        """True once no upstream is still on its first start (none held back either)."""
        return not self._held and not any(lifecycle.is_starting(u.state) for u in self.upstreams.values())


def _unheard(upstream: Upstream) -> None:
    """The change callback of a pool nobody listens to (a gate driven alone, in bench/)."""
