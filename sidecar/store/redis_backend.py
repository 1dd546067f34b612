"""Held results in Redis (or Valkey), shared by every replica: `store.url`.

Owns the layout in Redis and the atomic write. A result is a hash at
`<prefix>held:<handle>` (owner, upstream, tool, payload) that expires after
`store.ttlSeconds`; for each (owner, upstream) a sorted set of its handles by age and a
hash of their sizes keep the byte cap: one Lua script adds the result and evicts that
owner's oldest results of the same upstream past the cap, in one step on the server, so
two replicas holding at once cannot both overshoot. A read returns the result only to
its owner. Every operation is bounded by `store.timeoutSeconds`; any failure becomes
`StoreUnavailable` with words that never repeat the address or its password.

The `redis` package (the `[store]` extra, its asyncio client) loads only here. The keys
the script evicts are not declared to Redis, so a Redis Cluster is not supported; one
Redis (with replicas of its own) is.
"""

from __future__ import annotations

import asyncio
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from sidecar.config import Store
from sidecar.gate.budget.held import HeldResult
from sidecar.gate.budget.store import StoreUnavailable

__all__ = ["RedisBackend"]

_PUT = """
local idx, sizes, key = KEYS[1], KEYS[2], KEYS[3]
local handle, size, cap, ttl, prefix = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
for _, h in ipairs(redis.call('ZRANGEBYSCORE', idx, '-inf', now - ttl)) do
  redis.call('ZREM', idx, h)
  redis.call('HDEL', sizes, h)
end
local total = size
for _, v in ipairs(redis.call('HVALS', sizes)) do total = total + tonumber(v) end
while total > cap do
  local oldest = redis.call('ZRANGE', idx, 0, 0)
  if #oldest == 0 then break end
  local h = oldest[1]
  total = total - tonumber(redis.call('HGET', sizes, h) or '0')
  redis.call('ZREM', idx, h)
  redis.call('HDEL', sizes, h)
  redis.call('DEL', prefix .. 'held:' .. h)
end
redis.call('HSET', key, 'owner', ARGV[6], 'upstream', ARGV[7], 'tool', ARGV[8], 'payload', ARGV[9])
redis.call('EXPIRE', key, math.ceil(ttl))
redis.call('ZADD', idx, now, handle)
redis.call('HSET', sizes, handle, size)
redis.call('EXPIRE', idx, math.ceil(ttl))
redis.call('EXPIRE', sizes, math.ceil(ttl))
return total
"""
_UNREACHABLE = "the shared result store did not answer"


class RedisBackend:
    def __init__(self, settings: Store) -> None:
        assert settings.url is not None
        self.prefix = settings.prefix
        self.timeout = settings.timeout_seconds
        self.ttl = settings.ttl_seconds
        self.client: Any = aioredis.from_url(settings.url, socket_timeout=self.timeout,
                                             socket_connect_timeout=self.timeout)
        self._put = self.client.register_script(_PUT)

    async def put(self, owner: str, held: HeldResult, cap: int) -> int:
        group = f"{self.prefix}{owner}:{held.upstream}"
        keys = [f"{group}:idx", f"{group}:sizes", f"{self.prefix}held:{held.handle}"]
        args: list[bytes | str | int | float] = [held.handle, len(held.payload), cap, self.ttl, self.prefix, owner, held.upstream, held.tool,
                held.payload]
        total = await self._bounded(self._put(keys=keys, args=args))
        return int(total)

    async def get(self, owner: str, handle: str) -> HeldResult | None:
        fields = await self._bounded(self.client.hmget(f"{self.prefix}held:{handle}",
                                                       ["owner", "upstream", "tool", "payload"]))
        stored_owner, upstream, tool, payload = fields
        if stored_owner is None or stored_owner.decode() != owner or payload is None:
            return None  # missing, expired, evicted and foreign all look the same
        return HeldResult(handle, None, upstream.decode(), tool.decode(), bytes(payload))

    async def _bounded(self, operation: Any) -> Any:
        try:
            async with asyncio.timeout(self.timeout):
                return await operation
        except (RedisError, OSError, TimeoutError):
            raise StoreUnavailable(_UNREACHABLE) from None

    async def close(self) -> None:
        try:
            await self.client.aclose()
        except (RedisError, OSError):
            pass
