"""The cyclic garbage collector's schedule for a long-running proxy.

CPython starts a young-generation collection every 700 net new container objects.
With 64 calls in flight the sidecar holds about that many objects for calls not yet
answered, so the collector ran every few calls, promoted those live objects, and every
few thousand calls walked the whole heap (modules, catalog): about 9 us per call at 64
in flight, most of it in full collections. Calls leave almost no cyclic garbage behind
(reference counting frees them), so the young generation may grow larger before it is
collected, and what start-up loaded (modules, the config) is moved out of the
collector's sight for good.

Owns `settle_heap`, called once at start-up, after the serving path is imported (the
collector held off until then, from the entry point's first spawns: `hold_for_start`). What
is collected is unchanged for acyclic objects; cyclic garbage waits for a larger young
generation (a few thousand objects, well under a MB).

It also fixes glibc's threshold for serving a block from its own mapping at 128 KiB. By
default glibc raises that threshold each time such a block is freed (up to 32 MiB), so
after the first `tools/list` page or large result every later one came from the heap,
and the heap kept those megabytes after they were freed: about 2-7 MB of idle RSS after a
few 425-tool listings. A mapped block is given back the moment it is freed. Not where
`MALLOC_MMAP_THRESHOLD_` is set (the person's own choice), nor off glibc. An upstream
started early is greeted by a thread before the runtime loads (`sidecar.upstream.greeting`);
its first `tools/list` answer is read there, so the threshold is fixed before that thread
starts (`give_back_large_blocks`), or that thread's heap keeps about 6 MB.
"""

from __future__ import annotations

import gc
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["MMAP_THRESHOLD", "YOUNG_THRESHOLD", "give_back_large_blocks", "hold_for_start", "resume", "settle_heap"]

YOUNG_THRESHOLD = 10_000  # net new container objects between young collections (CPython: 700)
MMAP_THRESHOLD = 128 * 1024  # bytes: larger blocks get their own mapping, returned when freed
_M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)
_held = False  # switched off by `hold_for_start`, and not yet on again


def hold_for_start() -> None:
    """Switch the collector off while start-up loads the CLI and the runtime, until
    `settle_heap` (or `resume`) switches it on again. Nearly every object those imports make
    is kept for the process's life, so each collection among them walked them for nothing:
    45 collections, a median of 12-15 ms of CPU here, on the way to the first listing of
    every start. What cyclic garbage the imports leave (about 500 objects, about 0.1 MB of
    idle RSS) is frozen with the rest. Nothing when the collector is off already."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def resume() -> None:
    """The collector on again, when `hold_for_start` switched it off; idempotent."""
    global _held
    if _held:
        _held = False
        gc.enable()


def settle_heap(malloc_tuned: bool | None = None) -> None:
    """Freeze what start-up made and widen the young generation; idempotent. No collection
    first: start-up leaves no cyclic garbage to speak of, and one would cost tens of ms.
    `malloc_tuned`: MALLOC_MMAP_THRESHOLD_ is set (`sidecar.settings`), glibc's own to keep."""
    gc.freeze()  # modules and config are permanent: no collection walks them again
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
    resume()  # off since the entry point's `hold_for_start`, if it was
    if malloc_tuned is None:
        from sidecar.settings import process_settings

        malloc_tuned = process_settings().malloc_tuned
    give_back_large_blocks(malloc_tuned)


def give_back_large_blocks(malloc_tuned: bool) -> bool:
    """Fix glibc's mmap threshold (see the module's words); False where it was not set.
    `malloc_tuned`: MALLOC_MMAP_THRESHOLD_ is set (the early start, which runs before the
    settings are read, tells it from the environment it passes on to the child)."""
    if not sys.platform.startswith("linux") or malloc_tuned:
        return False
    mallopt = _libc_function("mallopt")
    return mallopt is not None and bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))


def _libc_function(name: str) -> Callable[[int, int], int] | None:
    """libc's `name`, taking two C ints and returning one, by `_ctypes` alone (None where it
    is missing): the `ctypes` package around it (struct, its type classes: about 4 ms more)
    would load before the early greetings' threads start (`sidecar.upstream.spawn`)."""
    try:
        import _ctypes

        class Int(_ctypes._SimpleCData):  # type: ignore[type-arg]  # ctypes.c_int
            _type_ = "i"

        class Function(_ctypes.CFuncPtr):  # what ctypes.CDLL makes of a name
            _flags_ = _ctypes.FUNCFLAG_CDECL
            _restype_ = Int

        class Process:  # ctypes.CDLL(None): the process's own symbols, as CFuncPtr reads a library
            _handle = _ctypes.dlopen(None, 0)  # type: ignore[arg-type]  # RTLD_LOCAL, ctypes' default mode

        function = Function((name, Process()))  # type: ignore[arg-type]  # it reads `_handle` alone
        function.argtypes = (Int, Int)
    except (ImportError, OSError, AttributeError):
        return None
    return function
