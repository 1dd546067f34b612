"""Sharing a gate's held results, confirmation states and pins with the other replicas.

Owns the wiring `store.url` asks for: the gate's held store becomes a `SharedHeldStore`
on the Redis backend (`sidecar.store.redis_backend`), and its spent confirmation states
and pins move to Redis too (`sidecar.gate.shared_trust`). The redis package loads only
here, when `store.url` is set. Refuses, as a `ConfigError` at `store.url`: a missing
redis package, an address that is not a Redis URL (its words never repeat the address).
"""

from __future__ import annotations

from sidecar.config import Store
from sidecar.errors import ConfigError
from sidecar.gate.chain import Gate
from sidecar.gate.confirm import ConfirmStage
from sidecar.gate.store import SharedHeldStore

__all__ = ["share_held", "share_trust"]


def share_held(gate: Gate, settings: Store, namespace: str) -> None:
    """Give `gate` a held store backed by `settings.url`, for the stateless callers of the
    face `namespace` names. Loads the Redis client only now."""
    try:
        from sidecar.store.redis_backend import RedisBackend

        backend = RedisBackend(settings)
    except ImportError:
        raise ConfigError("store.url", "a shared store needs the redis package (the [store] extra)") from None
    except ValueError as exc:  # its words may repeat the URL and its password: not shown
        raise ConfigError("store.url", f"not a Redis URL ({type(exc).__name__})") from None
    local = gate.held.local if isinstance(gate.held, SharedHeldStore) else gate.held
    gate.held = SharedHeldStore(local, backend, namespace)
    share_trust(gate, settings, namespace)  # confirmation states and pins, shared the same way


def share_trust(gate: Gate, settings: Store, namespace: str) -> None:
    """Give `gate` the shared spent states and pins of `namespace` (its bot and face)."""
    from sidecar.gate.shared_trust import RedisPins, RedisSpent, sync_client  # the sync redis client loads only now

    client = sync_client(settings)
    if gate.confirm is None:
        gate.confirm = ConfirmStage(gate.config.policy, gate.config.bot.id, gate.config.face.name, gate.redact)
    gate.confirm.spent = RedisSpent(client, settings.prefix)
    if gate.trust.active:
        gate.trust.store = RedisPins(client, settings.prefix, namespace, gate.trust.store)
