"""How a face is put together: one place that builds the pool, the gate, the catalog
holder and the hub, and wires them to each other.

Every front (stdio, HTTP, the gateway's one face per bot), the tests' in-memory harness
and the benchmarks build a face here, so they all run the same assembly. The per-server
facts (`sidecar.catalog.facts`) are made here for the servers started, by the same
function the face uses when a server joins later. Owns no
behaviour of its own: what to start (the upstreams the bot can reach), how to open
their transports (`opener`), and in what order the parts are made.
"""

from __future__ import annotations

from sidecar.catalog import LiveCatalog
from sidecar.catalog.facts import facts_for
from sidecar.config import SidecarConfig
from sidecar.gate import Gate
from sidecar.hub.face import Face
from sidecar.mounts.reach import reachable
from sidecar.upstream import Pool
from sidecar.upstream.channel import ChannelOpener
from sidecar.upstream.transports import open_channel

__all__ = ["build_face"]


def build_face(config: SidecarConfig, opener: ChannelOpener = open_channel) -> Face:
    """A face for `config`, its pool not yet running (the caller's task group runs
    `face.pool.run`). Only what the bot can reach is started: every surface then
    follows the selection."""
    pool = Pool(reachable(config), config.face.start_timeout_seconds, opener)
    live = LiveCatalog(facts_for(config, [upstream.config for upstream in pool]))
    gate = Gate(config, pool, live=live)
    return Face(config, pool, gate, live)
