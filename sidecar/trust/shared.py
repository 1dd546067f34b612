"""Confirmation states and tool pins in Redis, shared by every replica: `store.url`.

Owns two small stores with the sync `redis` client (both run rarely: a confirmation
answered, a listing judged), each call bounded by `store.timeoutSeconds`:

* `RedisSpent`, the `SpentStates` of the 2026-07-28 confirmation states: a used state id
  is `SET <prefix>spent:<id> NX` with the state's own remaining life as its expiry, so a
  state redeemed on one replica is refused on every other, and Redis forgets the id when
  the state would have expired anyway. Fails closed: when Redis does not answer, `spend`
  raises `StoreUnavailable` and the confirmation stage refuses the state, saying why.
* `RedisPins`, the `PinStore`: the pins of one upstream for one bot and face are a
  msgspec-encoded value at `<prefix>pins:<bot>/<face>:<alias>`, kept without expiry;
  every save bumps `<prefix>pins:<bot>/<face>:version`, which `version()` reads so a
  replica judges its listings again after another replica pinned or approved.
  When Redis does not answer at listing time the pins come from the local copy (the
  health file, written on every save too) and, without one, as no pins at all ({}, not
  None): every tool of that upstream is then a change and held under `hold` (listed and
  reported under `warn`), never trusted on first sight. Such a fallback is judged again
  once Redis answers.

The `redis` package (the `[store]` extra) loads with this module, which `sidecar.store.share` imports
only when `store.url` is set.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Mapping
from typing import Any

import msgspec
import redis
from redis.exceptions import RedisError

from sidecar.trust.pins import Approval, Pin, PinsNotKept, PinStore
from sidecar.config import Store
from sidecar.errors import StoreUnavailable

__all__ = ["RedisPins", "RedisSpent", "SharedTrust", "cli_pins", "sync_client"]

log = logging.getLogger(__name__)
_UNREACHABLE = "the shared store did not answer"
_encode_pins = msgspec.msgpack.Encoder(order="sorted").encode
_decode_pins = msgspec.msgpack.Decoder(dict[str, Pin]).decode


def sync_client(settings: Store) -> Any:
    """A sync client for `settings.url`; every connect and reply bounded by its timeout."""
    assert settings.url is not None
    return redis.Redis.from_url(settings.url, socket_timeout=settings.timeout_seconds,
                                socket_connect_timeout=settings.timeout_seconds)


class RedisSpent:
    """Used confirmation state ids in Redis, once only across replicas."""

    def __init__(self, client: Any, prefix: str) -> None:
        self.client = client
        self.prefix = prefix

    def spend(self, ident: str, expires: float) -> bool:
        life_ms = max(1, int((expires - time.time()) * 1000))
        try:
            first = self.client.set(f"{self.prefix}spent:{ident}", b"1", nx=True, px=life_ms)
        except (RedisError, OSError):
            raise StoreUnavailable(_UNREACHABLE) from None
        return bool(first)


class RedisPins:
    """The pins of one bot and face in Redis, with the health file as a local copy."""

    def __init__(self, client: Any, prefix: str, namespace: str, local: PinStore | None = None) -> None:
        self.client = client
        self.base = f"{prefix}pins:{namespace}:"
        self.local = local
        self._fallbacks = 0  # loads answered from the local copy: once Redis answers, judge again
        self._version: object = None

    def version(self) -> object:
        """The shared version (and how many fallback loads there were); unchanged while
        Redis does not answer, so an outage does not make every call judge again."""
        try:
            value = self.client.get(self.base + "version")
        except (RedisError, OSError):
            return self._version
        self._version = (value, self._fallbacks)
        return self._version

    def load_pins(self, alias: str) -> dict[str, Pin] | None:
        try:
            raw = self.client.get(self.base + alias)
        except (RedisError, OSError):
            return self._fallback(alias)
        if raw is None:  # none shared yet: a local copy (pins from before store.url) still counts
            return self.local.load_pins(alias) if self.local is not None else None
        try:
            return _decode_pins(raw)
        except msgspec.DecodeError:
            log.warning("upstream '%s': the shared pins do not decode; every tool is held until approved", alias)
            return {}

    def load_reviewable(self, alias: str) -> dict[str, Pin] | None:
        """`load_pins` with every definition, for a person's review: pins read from Redis
        carry theirs; the local copy, which a face reads without them, is read whole."""
        pins = self.load_pins(alias)
        if pins and not all(pin.definition for pin in pins.values()):
            load = getattr(self.local, "load_reviewable", None)
            return load(alias) if callable(load) else pins
        return pins

    def _fallback(self, alias: str) -> dict[str, Pin]:
        self._fallbacks += 1
        kept = self.local.load_pins(alias) if self.local is not None else None
        log.warning("upstream '%s': %s for its pins; judging by %s", alias, _UNREACHABLE,
                    "the local copy" if kept is not None else "no pins (every tool is a change)")
        return kept if kept is not None else {}

    def pin_first_sight(self, alias: str, pins: Mapping[str, Pin]) -> dict[str, Pin]:
        """Pins seen first, shared only where none are (`SET NX`): another replica's pins,
        when it was first, are the ones kept. Without Redis the local copy decides; when
        neither can keep them, `PinsNotKept` (the trust fails closed)."""
        try:
            first = self.client.set(self.base + alias, _encode_pins(dict(pins)), nx=True)
            if first:
                self.client.incr(self.base + "version")
            kept = dict(pins) if first else self.load_pins(alias) or dict(pins)
        except (RedisError, OSError):
            if self.local is None:
                raise PinsNotKept("the shared store", _UNREACHABLE) from None
            log.warning("upstream '%s': %s; its first-sight pins were kept only in the local copy", alias, _UNREACHABLE)
            return self.local.pin_first_sight(alias, pins)
        if self.local is not None:
            with contextlib.suppress(PinsNotKept):  # a copy only: the shared pins count
                self.local.pin_first_sight(alias, kept)
        return kept

    def publish(self, alias: str, pins: Mapping[str, Pin], approval: Approval) -> bool:
        """Write the shared pins and bump the version in one transaction, by a person's act;
        False when Redis did not answer (`servers approve` then says so)."""
        if approval.alias != alias:
            raise ValueError(f"an approval of '{approval.alias}' cannot change the pins of '{alias}'")
        try:
            with self.client.pipeline(transaction=True) as pipe:
                pipe.set(self.base + alias, _encode_pins(dict(pins)))
                pipe.incr(self.base + "version")
                pipe.execute()
        except (RedisError, OSError):
            return False
        return True


def cli_pins(config: Any) -> RedisPins | None:
    """The shared pins `servers review` and `approve` use for the config's bot and face
    (None without `store.url`)."""
    if not config.store.url:
        return None
    return RedisPins(sync_client(config.store), config.store.prefix, f"{config.bot.id}/{config.face.name}")


class SharedTrust:
    """The spent states and pins of `namespace` (a bot and face), shared in Redis; the
    gate wraps its local pin store with `pins` (`sidecar.gate.parts.SharedState`)."""

    def __init__(self, settings: Store, namespace: str) -> None:
        self.client = sync_client(settings)
        self.prefix, self.namespace = settings.prefix, namespace
        self.spent = RedisSpent(self.client, settings.prefix)

    def pins(self, local: PinStore | None) -> RedisPins:
        return RedisPins(self.client, self.prefix, self.namespace, local)
