"""The caching hints (`ttlMs`, `cacheScope`) of the 2026-07-28 front's cacheable results.

Every answer of this front is for one bot: a listing is the face's merge of its upstreams
filtered by the bot's grant, and a read goes through the bot's gate. So `cacheScope` is
always `private`, whatever an upstream said: a shared cache must never hand one bot's
answer to another. `ttlMs` is never longer than the sidecar can keep true:

- a listing (`tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`,
  `server/discover`) gets 0. The sidecar builds it and it changes whenever an upstream's
  lists change, a server joins or leaves, or a held tool is approved; a client learns of
  that on its `subscriptions/listen` stream, and without one it must ask again.
- `resources/read` keeps the upstream's own `ttlMs` (its content is the upstream's,
  passed unchanged), capped at `READ_TTL_CEILING_MS`: the re-list bound of a stateless
  upstream without `subscriptions/listen` (sidecar.upstream.listening), the longest the
  sidecar may go without knowing that a resource left (then it is no longer routed). A
  missing or malformed upstream `ttlMs` is 0.

The upstream's other fields pass as they came. A result that already says `private` and a
ttl within its bound is not rebuilt (an upstream's bytes are only read at the top level).
"""

from __future__ import annotations

from typing import Any

import msgspec

from sidecar.upstream.listening import RELIST_SECONDS

__all__ = ["LISTINGS", "READ_TTL_CEILING_MS", "bounded_ttl", "cache_fields", "hinted"]

LISTINGS = frozenset({"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list"})
READ_TTL_CEILING_MS = int(RELIST_SECONDS * 1000)


def ceiling_of(method: str) -> int:
    return READ_TTL_CEILING_MS if method == "resources/read" else 0


def bounded_ttl(given: object, ceiling: int) -> int:
    """The upstream's ttl when it is a whole number of milliseconds, within [0, ceiling]; else 0."""
    if type(given) is not int or given < 0:  # bool and floats are not a ttl
        return 0
    return min(given, ceiling)


def cache_fields(method: str, given_ttl: object) -> dict[str, Any]:
    return {"ttlMs": bounded_ttl(given_ttl, ceiling_of(method)), "cacheScope": "private"}


def acceptable(method: str, ttl: object, scope: object) -> bool:
    """Hints already as the sidecar would set them."""
    return scope == "private" and type(ttl) is int and 0 <= ttl <= ceiling_of(method)


def hinted(method: str, result: dict[str, Any]) -> dict[str, Any]:
    """A result object with its caching hints made safe, and `resultType` kept or set."""
    return {**result, "resultType": result.get("resultType", "complete"), **cache_fields(method, result.get("ttlMs"))}


def rehinted_bytes(method: str, raw: bytes | memoryview) -> bytes | None:
    """An upstream's result (bytes) with its hints made safe, re-encoded; None when it is
    not an object (passed as it came)."""
    try:
        result = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return None
    return msgspec.json.encode(hinted(method, result)) if isinstance(result, dict) else None
