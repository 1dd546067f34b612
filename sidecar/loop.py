"""The event loop's libraries, loaded without OpenSSL when the process speaks no TLS.

Owns one decision and one way of loading. A stdio face whose servers are all stdio
children, with no Redis store and no trace export, never opens a TLS connection, yet
`asyncio` and `uvloop` import `ssl` and `hashlib` imports `_hashlib`, and either maps
OpenSSL's libcrypto and sets up its providers: about 5.9 MB of the idle process's
resident memory (issue 23's idle RSS target). `load_without_openssl` imports them with
OpenSSL kept out:

- `asyncio` sees no `ssl` module (its own fallback: `ssl = None` in each module that
  uses it, so a TLS connection asked of asyncio would say so in words);
- `uvloop` reads a few of `ssl`'s names when it is imported (its TLS protocol's types);
  it is given stand-ins for them, which only a TLS connection on the loop would meet;
- `hashlib` and `hmac` take CPython's own SHA-2, SHA-3 and BLAKE2 (the same digests, about
  4 ms more per 425 definitions hashed); what only OpenSSL offers (`hashlib.scrypt`, names
  such as `sm3`) is missing in this process, and nothing a stdio face loads asks for it.

Afterwards `ssl` and `_hashlib` import as usual for whatever asks later (a library in a
worker thread); only this process's event loop stays without TLS. Refuses to act when
any of these modules is loaded already, or when the config could speak TLS: a URL
server, a store, trace export (those start on the usual libraries).
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sidecar.config import SidecarConfig
    from sidecar.settings import Settings

__all__ = ["load_without_openssl", "loop_libraries_without_openssl", "speaks_no_tls"]

# Loaded by the ones below or loading OpenSSL themselves: any of them already here means
# the choice was made before us.
_WATCHED = ("ssl", "_ssl", "_hashlib", "hashlib", "hmac", "asyncio", "uvloop")


def speaks_no_tls(config: SidecarConfig, settings: Settings) -> bool:
    """True when nothing this stdio face is configured to do opens a TLS connection."""
    return (all(server.type == "stdio" for server in config.servers) and not config.store.url
            and not settings.tracing)


def load_without_openssl(config: SidecarConfig, settings: Settings) -> bool:
    """Load asyncio, uvloop (when installed) and hashlib without OpenSSL, when the face
    speaks no TLS and none of them is loaded yet; True when it did."""
    return speaks_no_tls(config, settings) and loop_libraries_without_openssl()


def loop_libraries_without_openssl() -> bool:
    """The loading itself (see the module's words): False, loading nothing, when one of
    the modules it loads is loaded already."""
    if any(name in sys.modules for name in _WATCHED):
        return False
    _without(("ssl", "_hashlib"), lambda: [_load(name) for name in ("asyncio", "hashlib", "hmac")])
    _without_ssl_for_uvloop()
    return True


def _load(name: str) -> object:
    """Import a top-level module by the import statement's own path (`__import__`), so the
    interpreter's "import" audit event is raised for it as for any other import
    (`importlib.import_module` skips that event)."""
    return __import__(name)


def _without(names: tuple[str, ...], load: Callable[[], object]) -> None:
    """Run `load` while importing any of `names` fails as if it were not built in."""
    for name in names:
        sys.modules[name] = None  # type: ignore[assignment]  # None: "not importable", Python's own marker
    try:
        load()
    finally:
        for name in names:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]


class _SslStandIns(types.ModuleType):
    """What uvloop reads of `ssl` as it loads (its TLS protocol's types and constants),
    as stand-ins: a class per name (an exception for the errors), 0 per constant."""

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        value: object = 0 if name.isupper() else type(name, (Exception,) if name.endswith("Error") else (), {})
        setattr(self, name, value)
        return value


def _without_ssl_for_uvloop() -> None:
    """Import uvloop on the stand-ins; a uvloop that needs more of `ssl` than they give
    loads on the real one instead (OpenSSL then loads, as it would have)."""
    sys.modules["ssl"] = _SslStandIns("ssl")
    try:
        _load("uvloop")
    except ImportError:  # not installed: asyncio's own loop runs
        pass
    except Exception:  # noqa: BLE001 (a newer uvloop asked for what the stand-ins lack)
        for name in [n for n in sys.modules if n == "uvloop" or n.startswith("uvloop.")]:
            del sys.modules[name]
        del sys.modules["ssl"]
        _load("uvloop")
        return
    finally:
        if isinstance(sys.modules.get("ssl"), _SslStandIns):
            del sys.modules["ssl"]
