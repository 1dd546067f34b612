"""The cyclic garbage collector's schedule for a long-running proxy.

CPython starts a young-generation collection every 700 net new container objects.
With 64 calls in flight the sidecar holds about that many objects for calls not yet
answered, so the collector ran every few calls, promoted those live objects, and every
few thousand calls walked the whole heap (modules, catalog): about 9 us per call at 64
in flight, most of it in full collections. Calls leave almost no cyclic garbage behind
(reference counting frees them), so the young generation may grow larger before it is
collected, and what start-up loaded (modules, the config) is moved out of the
collector's sight for good.

Owns `settle_heap`, called once at start-up, after the serving path is imported. What
is collected, and when memory is given back, is unchanged for acyclic objects; cyclic
garbage waits for a larger young generation (a few thousand objects, well under a MB).
"""

from __future__ import annotations

import gc

__all__ = ["YOUNG_THRESHOLD", "settle_heap"]

YOUNG_THRESHOLD = 10_000  # net new container objects between young collections (CPython: 700)


def settle_heap() -> None:
    """Freeze what start-up made and widen the young generation; idempotent. No collection
    first: start-up leaves no cyclic garbage to speak of, and one would cost tens of ms."""
    gc.freeze()  # modules and config are permanent: no collection walks them again
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
