"""The Redis backend of shared held results against a real redis-server: the byte cap per
(owner, upstream) with the oldest evicted first, owner binding, TTL, and two writers at
once never overshooting the cap."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from sidecar.config import Store
from sidecar.gate.budget.held import HeldResult
from sidecar.gate.budget.store import StoreUnavailable
from sidecar.store.redis_backend import RedisBackend
from tests.cloud.cloud_support import open_redis
from tests.http.http_support import free_port

pytestmark = pytest.mark.timeout(60)


def held(handle: str, size: int, upstream: str = "alpha") -> HeldResult:
    return HeldResult(handle, None, upstream, "records", b"x" * size)


async def test_cap_owner_and_ttl(tmp_path: Path) -> None:
    async with open_redis(tmp_path) as (port, _):
        backend = RedisBackend(Store(url=f"redis://127.0.0.1:{port}/0", ttl_seconds=120))
        for name in ("h_one", "h_two", "h_three"):
            total = await backend.put("owner-a", held(name, 40), cap=100)
        assert total == 80  # the oldest went to make room
        assert await backend.get("owner-a", "h_one") is None
        found = await backend.get("owner-a", "h_three")
        assert found is not None and found.payload == b"x" * 40 and found.upstream == "alpha"
        assert await backend.get("owner-b", "h_three") is None  # another owner: looks missing
        await backend.put("owner-b", held("h_four", 90), cap=100)  # owners have their own caps
        assert await backend.get("owner-a", "h_two") is not None
        await backend.put("owner-a", held("h_five", 90, upstream="beta"), cap=100)  # and upstreams
        assert await backend.get("owner-a", "h_two") is not None
        client = aioredis.from_url(f"redis://127.0.0.1:{port}/0")
        assert 0 < await client.ttl("omb:held:h_three") <= 120
        await client.aclose()
        await backend.close()


async def test_two_writers_at_once_stay_within_the_cap(tmp_path: Path) -> None:
    async with open_redis(tmp_path) as (port, _):
        url = f"redis://127.0.0.1:{port}/0"
        one, two = RedisBackend(Store(url=url)), RedisBackend(Store(url=url))
        totals = await asyncio.gather(*(b.put("owner", held(f"h_{i:03d}", 30), cap=100)
                                        for i, b in enumerate([one, two] * 20)))
        assert max(totals) <= 100
        await one.close()
        await two.close()


async def test_an_unreachable_store_says_so_within_its_time() -> None:
    backend = RedisBackend(Store(url=f"redis://127.0.0.1:{free_port()}/0", timeout_seconds=0.5))
    with pytest.raises(StoreUnavailable, match="did not answer"):
        await backend.get("owner", "h_x")
    with pytest.raises(StoreUnavailable):
        await backend.put("owner", held("h_y", 10), cap=100)
    await backend.close()
