"""The libraries the CLI loads first, loaded lean: msgspec without `typing_extensions`
or `platform`, and `textwrap` and `tokenize` on first use.

Owns one way of loading, done once, first thing in the CLI (`load_libraries_lean`).
Four modules that do nothing for a start sat on the stdio runtime's start path (issue
23; `python -m bench.imports`):

- `typing_extensions` (installed with the HTTP libraries the sidecar depends on): msgspec
  imports it only to read type hints through its `get_type_hints` and its
  `Required`/`NotRequired`; on Python 3.11 the standard library has both
  (`typing.Required` is `typing_extensions.Required` there), and no type the sidecar
  decodes uses what only `typing_extensions` adds (`ReadOnly`, its own `TypedDict`).
  It is kept out while msgspec loads.
- `platform`: msgspec's core imports `uuid`, which on Linux and the BSDs imports
  `platform` for one call, `platform.system()`, to learn whether it runs on Linux or
  AIX; `platform` compiles a handful of regexes and builds a named tuple as it loads.
  `uuid` is given a stand-in whose `system()` is `os.uname().sysname`, the value
  `platform.system()` gives on those systems.
- `textwrap` (imported by msgspec's JSON schema generator, for `dedent`, and by
  `traceback`, for `indent` on an exception group) and `tokenize` (imported by
  `linecache`, to open a source file for a traceback's lines): nothing reads them at
  start, and they compile regexes as they load. Each is put in `sys.modules` as a
  `LoadedOnFirstUse`, which imports the real module the first time a name of it is
  read, then reads from it.

`typing_extensions` and `platform` import as usual afterwards for whatever asks for
them: only msgspec keeps the standard library's typing names, and `uuid` keeps what it
learnt. Does nothing when msgspec is loaded already; leaves any of the four alone when
it is loaded already (the choice was made before us).
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
import types

__all__ = ["LoadedOnFirstUse", "load_libraries_lean"]

_ON_FIRST_USE = ("textwrap", "tokenize")


def load_libraries_lean() -> bool:
    """Import msgspec while `typing_extensions` is not importable and `uuid` (if it loads
    now) reads a stand-in `platform`, with `textwrap` and `tokenize` loaded on first use;
    True when it did."""
    if "msgspec" in sys.modules:
        return False
    kept_out = "typing_extensions" not in sys.modules
    if kept_out:
        sys.modules["typing_extensions"] = None  # type: ignore[assignment]  # None: "not importable", Python's own marker
    stand_in = _platform_for_uuid()
    for name in _ON_FIRST_USE:
        if name not in sys.modules:
            sys.modules[name] = LoadedOnFirstUse(name)
    try:
        __import__("msgspec")
    finally:
        if kept_out and sys.modules.get("typing_extensions", 0) is None:
            del sys.modules["typing_extensions"]
        if stand_in is not None and sys.modules.get("platform") is stand_in:
            del sys.modules["platform"]
            uuid = sys.modules.get("uuid")
            if uuid is not None and getattr(uuid, "platform", None) is stand_in:
                del uuid.platform  # the name `uuid` bound at import; the real module loads for whoever asks
    return True


def _platform_for_uuid() -> types.ModuleType | None:
    """The stand-in `platform`, placed where `import platform` finds it; None (nothing
    placed) when `uuid` or `platform` is loaded already or the system has no `uname`."""
    if "uuid" in sys.modules or "platform" in sys.modules or not hasattr(os, "uname"):
        return None
    stand_in = types.ModuleType("platform", "What `uuid` reads of `platform` as it loads (sidecar.lean_libraries).")
    stand_in.system = _system  # type: ignore[attr-defined]
    sys.modules["platform"] = stand_in
    return stand_in


def _system() -> str:
    return os.uname().sysname


_FIRST_USE = threading.Lock()


class LoadedOnFirstUse(types.ModuleType):
    """Stands in `sys.modules` for a module of the standard library until a name of it is
    first read: then the real module is imported (it takes the stand-in's place in
    `sys.modules`) and its names are copied here, so a module that bound the stand-in
    reads the real names from then on. Safe across threads (one import, under a lock)."""

    def __getattr__(self, name: str) -> object:
        if name.startswith("__") and name.endswith("__"):  # the import system's own look-ups: not a use
            raise AttributeError(name)
        with _FIRST_USE:
            if "__file__" not in self.__dict__:
                if sys.modules.get(self.__name__) is self:
                    del sys.modules[self.__name__]
                self.__dict__.update(vars(importlib.import_module(self.__name__)))
        return object.__getattribute__(self, name)
