"""msgspec, loaded without `typing_extensions` when nothing has loaded either yet.

Owns one way of loading. msgspec imports `typing_extensions` when it is installed (the
HTTP libraries the sidecar depends on install it) only to read type hints through its
`get_type_hints` and its `Required`/`NotRequired`; on Python 3.11 the standard library
has both (`typing.Required` is `typing_extensions.Required` there), and no type the
sidecar decodes uses what only `typing_extensions` adds (`ReadOnly`, its own
`TypedDict`). Kept out, the module's import (about 2-3 ms of the stdio runtime's start,
`python -m bench.imports`) leaves the start path.

`typing_extensions` imports as usual afterwards for whatever asks for it; only msgspec
keeps the standard library's names. Does nothing when msgspec or `typing_extensions` is
loaded already (the choice was made before us).
"""

from __future__ import annotations

import sys

__all__ = ["load_msgspec_without_typing_extensions"]


def load_msgspec_without_typing_extensions() -> bool:
    """Import msgspec while `typing_extensions` is not importable; True when it did."""
    if "msgspec" in sys.modules or "typing_extensions" in sys.modules:
        return False
    sys.modules["typing_extensions"] = None  # type: ignore[assignment]  # None: "not importable", Python's own marker
    try:
        __import__("msgspec")
    finally:
        if sys.modules.get("typing_extensions", 0) is None:
            del sys.modules["typing_extensions"]
    return True
