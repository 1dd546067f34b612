"""The upstream pool: stdio children (HTTP and SSE to come), supervision, connections."""

from sidecar.upstream.connection import Connection, PeerHandler, result_of
from sidecar.upstream.pool import Pool
from sidecar.upstream.supervisor import Upstream

__all__ = ["Connection", "PeerHandler", "Pool", "Upstream", "result_of"]
