"""The upstream pool: stdio children and URL servers, supervision, connections.

The package's names load on first use (PEP 562): the CLI starts stdio children early
(`sidecar.upstream.spawn`) and answers the engine's `initialize` before asyncio and the
pool are imported, and importing a submodule runs this file first.
"""

from __future__ import annotations

TYPE_CHECKING = False  # as typing says it, without importing typing (2 ms) before the first spawn

from sidecar import names_on_first_use

if TYPE_CHECKING:
    from sidecar.upstream.connection import Connection, PeerHandler, result_of
    from sidecar.upstream.pool import Pool
    from sidecar.upstream.supervisor import Upstream

__all__ = ["Connection", "PeerHandler", "Pool", "Upstream", "result_of"]

_HOMES = {"Connection": "connection", "PeerHandler": "connection", "result_of": "connection",
          "Pool": "pool", "Upstream": "supervisor"}


__getattr__ = names_on_first_use(__name__, _HOMES)
