"""The upstream pool: stdio children and URL servers, supervision, connections.

The package's names load on first use (PEP 562): the CLI starts stdio children early
(`sidecar.upstream.spawn`) and answers the engine's `initialize` before asyncio and the
pool are imported, and importing a submodule runs this file first.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sidecar.upstream.connection import Connection, PeerHandler, result_of
    from sidecar.upstream.pool import Pool
    from sidecar.upstream.supervisor import Upstream

__all__ = ["Connection", "PeerHandler", "Pool", "Upstream", "result_of"]

_HOMES = {"Connection": "connection", "PeerHandler": "connection", "result_of": "connection",
          "Pool": "pool", "Upstream": "supervisor"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'sidecar.upstream' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"sidecar.upstream.{home}"), name)
    globals()[name] = value
    return value
