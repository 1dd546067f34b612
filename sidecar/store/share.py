"""Sharing a face's held results, confirmation states and pins with the other replicas.

Owns what `store.url` asks for: `shared_state` gives the composition root the
`SharedState` a gate is built with (`sidecar.gate.parts`): its held store becomes a
`SharedHeldStore` on the Redis backend (`sidecar.store.redis_backend`), and its spent
confirmation states and pins move to Redis too (`sidecar.trust.shared`). The redis
package loads only here, when `store.url` is set. Refuses, as a `ConfigError` at
`store.url`: a missing redis package, an address that is not a Redis URL (its words never
repeat the address).
"""

from __future__ import annotations

from typing import Any

from sidecar.config import Store
from sidecar.errors import ConfigError
from sidecar.gate.budget.held import HeldStore
from sidecar.gate.parts import SharedState
from sidecar.gate.budget.store import SharedHeldStore

__all__ = ["shared_state"]


class _RedisShared:
    """Held results on the backend; spent states and pins through `SharedTrust`."""

    def __init__(self, backend: Any, trust: Any, namespace: str) -> None:
        self.backend, self.trust, self.namespace = backend, trust, namespace
        self.spent = trust.spent

    def held(self, local: HeldStore) -> SharedHeldStore:
        return SharedHeldStore(local, self.backend, self.namespace)

    def pins(self, local: Any) -> Any:
        return self.trust.pins(local)


def shared_state(settings: Store, namespace: str) -> SharedState:
    """The state the stateless callers of the face `namespace` names share through
    `settings.url` (each caller identity keeps its own). Loads the Redis client only now."""
    try:
        from sidecar.store.redis_backend import RedisBackend

        backend = RedisBackend(settings)
    except ImportError:
        raise ConfigError("store.url", "a shared store needs the redis package (the [store] extra)") from None
    except ValueError as exc:  # its words may repeat the URL and its password: not shown
        raise ConfigError("store.url", f"not a Redis URL ({type(exc).__name__})") from None
    from sidecar.trust.shared import SharedTrust  # the sync redis client loads only now

    return _RedisShared(backend, SharedTrust(settings, namespace), namespace)
