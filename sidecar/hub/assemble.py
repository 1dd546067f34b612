"""How a face is put together: the one place that builds the pool, the catalog holder,
the gate (with every collaborator it is given) and the hub, and wires them to each other.

Every front (stdio, HTTP, the gateway's one face per bot) builds its face here through
the composition root (`sidecar.root.Root.face`), and so do the tests' in-memory harness
and the benchmarks: they all run the same assembly. The per-server facts
(`sidecar.catalog.facts`) are made here for the servers started, by the same function the
face uses when a server joins later. `FaceOptions` carries what the root decided for the
face: the environment copy (`sidecar.settings`), the shared store, the observers and the
tracing. Owns no behaviour of its own: what to start (the upstreams the bot can reach),
how to open their transports (`opener`), and in what order the parts are made.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from sidecar.catalog import LiveCatalog
from sidecar.catalog.facts import facts_for
from sidecar.config import SidecarConfig
from sidecar.gate import Gate, GateParts, Observer, SharedState, Stage
from sidecar.hub.face import Face
from sidecar.mounts.reach import reachable
from sidecar.upstream.spawn import started_early
from sidecar.upstream import Pool
from sidecar.upstream.channel import ChannelOpener
from sidecar.upstream.transports import open_channel

__all__ = ["FaceOptions", "build_face"]


class FaceOptions(msgspec.Struct, frozen=True):
    """What the composition root gives one face; the defaults make a bare face (tests)."""

    environ: Mapping[str, str] | None = None  # the settings' copy (layout switch, confirmation key)
    shared: SharedState | None = None  # `store.url`, for a face serving stateless callers
    observers: tuple[Observer, ...] = ()  # e.g. the metrics' counter for this face
    tracing: Any = None  # a `sidecar.gate.observers.tracing.Tracing` when traces are on


def build_face(config: SidecarConfig, opener: ChannelOpener = open_channel,
               options: FaceOptions = FaceOptions()) -> Face:
    """A face for `config`, its pool not yet running (the caller's task group runs
    `face.pool.run`). Only what the bot can reach is started: every surface then
    follows the selection."""
    servers = reachable(config)
    early = [s.alias for s in servers if started_early(s)]  # processes started before the runtime loaded
    pool = Pool(servers, config.face.start_timeout_seconds, opener, early, config.face.list_wait_seconds)
    live = LiveCatalog(facts_for(config, [upstream.config for upstream in pool]))
    around, observers = _traced(options, live)
    parts = GateParts(live=live, shared=options.shared, environ=options.environ, around_call=around,
                      observers=(*options.observers, *observers))
    gate = Gate(config, pool, parts=parts)
    return Face(config, pool, gate, live, options.environ, options.tracing)


def _traced(options: FaceOptions, live: LiveCatalog) -> tuple[tuple[Stage, ...], tuple[Observer, ...]]:
    """The client span stage and the decision observer, when traces are on."""
    if options.tracing is None:
        return (), ()
    stage, observer = options.tracing.gate_parts(lambda: live.facts.servers)
    return (stage,), (observer,)
