"""Upstreams whose first listings are prepared together are told together: the pool holds
the news of a first start that ends ready while another upstream's first listing is still
being prepared, and tells them all at once when the last is in. Meanwhile a held upstream
still counts as starting (a call to it waits, a listing waits), a late one is told alone,
and nothing but first starts is held."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from sidecar.config import ServerConfig, parse_config
from sidecar.upstream import Connection, Pool, Upstream
from sidecar.upstream.channel import Channel, Inbox
from sidecar.wire import UpstreamFrame
from tests.harness import FakeServer, tool
from tests.harness.upstream import WAIT


class Heard:
    """What the pool told: each `on_change` alone and each batch of arrivals, in order;
    every prepare waits for its alias's gate to open."""

    def __init__(self, aliases: Sequence[str]) -> None:
        self.told: list[tuple[str, ...]] = []
        self.gates = {alias: asyncio.Event() for alias in aliases}
        self.preparing: set[str] = set()

    def alone(self, upstream: Upstream) -> None:
        self.told.append((upstream.alias,))

    def together(self, upstreams: Sequence[Upstream]) -> None:
        self.told.append(tuple(u.alias for u in upstreams))

    async def prepare(self, alias: str, tools: list[dict[str, Any]]) -> None:
        self.preparing.add(alias)
        await self.gates[alias].wait()

    def upstream_notification(self, conn: Connection, frame: UpstreamFrame) -> None:
        pass  # none is sent here

    def upstream_request(self, conn: Connection, frame: UpstreamFrame) -> None:
        assert frame.id is not None
        conn.respond_error(frame.id, -32601, "not relayed here")

    async def until(self, check: Any) -> None:
        """Loop turns until `check()` holds (a held arrival tells nobody: no event to wait on)."""
        async with asyncio.timeout(WAIT):
            while not check():
                await asyncio.sleep(0)


@asynccontextmanager
async def _pool(servers: dict[str, FakeServer], early: Sequence[str] = (),
                early_wait: float = 0.0) -> AsyncIterator[tuple[Pool, Heard]]:
    config = parse_config({"mcpServers": {alias: {"command": f"in-memory-{alias}"} for alias in servers}}, {})

    async def opener(server: ServerConfig, inbox: Inbox) -> Channel:
        return await servers[server.alias].open(server, inbox)

    pool = Pool(config.servers, 30.0, opener, early, early_wait)
    heard = Heard(list(servers))
    pool.listen(heard, heard.alone, heard.prepare, heard.together)
    task = asyncio.create_task(pool.run())
    try:
        yield pool, heard
    finally:
        task.cancel()
        await asyncio.wait([task])


def _servers(*aliases: str) -> dict[str, FakeServer]:
    return {alias: FakeServer([tool("echo")], name=alias) for alias in aliases}


def _ready(pool: Pool, *aliases: str) -> bool:
    return all((u := pool.get(a)) is not None and u.state == "ready" for a in aliases)


async def test_first_listings_prepared_together_are_told_once_when_the_last_is_in() -> None:
    async with _pool(_servers("a", "b", "c")) as (pool, heard):
        await heard.until(lambda: heard.preparing == {"a", "b", "c"})
        heard.gates["b"].set()
        await heard.until(lambda: _ready(pool, "b"))
        heard.gates["a"].set()
        await heard.until(lambda: _ready(pool, "a"))
        assert heard.told == []  # c's first listing is still being prepared
        assert pool.starting("a") and pool.starting("b") and not pool.settled()
        heard.gates["c"].set()
        await heard.until(lambda: heard.told)
        assert heard.told == [("b", "a", "c")]
        assert pool.settled() and not pool.starting("a")
        async with asyncio.timeout(WAIT):
            await pool.wait_first_start()  # every first start is past, as told


async def test_a_call_waiting_on_a_held_upstream_resumes_only_once_it_is_told() -> None:
    async with _pool(_servers("a", "b")) as (pool, heard):
        await heard.until(lambda: heard.preparing == {"a", "b"})
        heard.gates["a"].set()
        await heard.until(lambda: _ready(pool, "a"))
        waiting = asyncio.create_task(pool.wait_first_start("a"))
        for _ in range(5):
            await asyncio.sleep(0)
        assert not waiting.done() and heard.told == []
        heard.gates["b"].set()
        async with asyncio.timeout(WAIT):
            await waiting
        assert heard.told == [("a", "b")]


async def test_a_late_upstream_is_told_alone() -> None:
    servers = _servers("a", "b")
    servers["b"].answers_initialize = False
    async with _pool(servers) as (pool, heard):
        await servers["b"].handshake_held()
        await heard.until(lambda: heard.preparing == {"a"})
        heard.gates["a"].set()
        await heard.until(lambda: heard.told)
        assert heard.told == [("a",)]  # b's listing was not being prepared: a is not held for it
        heard.gates["b"].set()
        servers["b"].finish_start()
        await heard.until(lambda: len(heard.told) == 2)
        assert heard.told == [("a",), ("b",)]


async def test_a_first_start_that_fails_is_not_held() -> None:
    servers = _servers("a", "b")
    servers["b"].refuse_start = "cannot start"
    async with _pool(servers) as (pool, heard):
        await heard.until(lambda: heard.told)
        assert heard.told[0] == ("b",) and pool.get("b").state == "failed"  # type: ignore[union-attr]


async def test_a_held_upstream_that_stops_before_the_others_are_in_is_told_with_them() -> None:
    servers = _servers("a", "b")
    async with _pool(servers) as (pool, heard):
        await heard.until(lambda: heard.preparing == {"a", "b"})
        heard.gates["a"].set()
        await heard.until(lambda: _ready(pool, "a"))
        servers["a"].die()
        await heard.until(lambda: heard.told)
        assert heard.told == [("a", "a")]  # its arrival and its stop, in order, told at once
        assert pool.get("a").state == "restarting"  # type: ignore[union-attr]
        heard.gates["b"].set()
        await heard.until(lambda: _ready(pool, "b"))


async def test_an_early_upstream_ready_first_waits_for_the_other_early_ones_still_starting() -> None:
    """Processes started before the runtime loaded answer close together: one whose listing
    is prepared before another early one's answer is read waits for it (one rebuild); a
    server not started early is not waited for."""
    servers = _servers("a", "b", "late")
    servers["b"].answers_initialize = False
    servers["late"].answers_initialize = False
    async with _pool(servers, early=("a", "b"), early_wait=30.0) as (pool, heard):
        await servers["b"].handshake_held()
        await servers["late"].handshake_held()
        await heard.until(lambda: heard.preparing == {"a"})
        heard.gates["a"].set()
        await heard.until(lambda: _ready(pool, "a"))
        for _ in range(5):
            await asyncio.sleep(0)
        assert heard.told == [] and pool.starting("a")  # b, started early, is still on its first start
        heard.gates["b"].set()
        servers["b"].finish_start()
        await heard.until(lambda: heard.told)
        assert heard.told == [("a", "b")]
        heard.gates["late"].set()
        servers["late"].finish_start()
        await heard.until(lambda: len(heard.told) == 2)
        assert heard.told == [("a", "b"), ("late",)]


async def test_the_wait_for_early_upstreams_ends_with_the_listing_wait() -> None:
    servers = _servers("a", "b")
    servers["b"].answers_initialize = False
    async with _pool(servers, early=("a", "b"), early_wait=0.2) as (pool, heard):
        await servers["b"].handshake_held()
        heard.gates["a"].set()
        await heard.until(lambda: _ready(pool, "a"))
        assert heard.told == []
        async with asyncio.timeout(WAIT):
            while not heard.told:
                await asyncio.sleep(0.01)
        assert heard.told == [("a",)] and not pool.starting("a")  # told at the wait's end, b still starting
        heard.gates["b"].set()
        servers["b"].finish_start()
        await heard.until(lambda: len(heard.told) == 2)
        assert heard.told == [("a",), ("b",)]
