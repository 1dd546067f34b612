"""The composition root: config + options -> faces, for stdio, HTTP and each bot of a gateway.

Owns `Root`, made once per process by `sidecar.app` from the typed settings
(`sidecar.settings`) and what the front needs: the process-wide observers (traces when
OTLP export is configured, the metrics registry when `metrics.enabled`), the health
schedule (given by the CLI when `health.schedule` is set), and `Root.face`, the one
function that builds a face: which servers mount, the shared store (`store.url`, for
the HTTP fronts' stateless callers), the metrics counter and trace stages its gate is
built with, the confirmation key's environment, and the per-server snapshot
(`sidecar.catalog.facts`, made by `sidecar.hub.assemble.build_face`). Nothing outside
sets a gate's or a face's attributes afterwards.

Loads nothing it does not use: opentelemetry only with OTLP export configured,
prometheus_client only with metrics on, redis only with `store.url`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sidecar.config import SidecarConfig
from sidecar.hub import Face, FaceOptions, build_face
from sidecar.mounts.plan import mountable
from sidecar.settings import Settings

if TYPE_CHECKING:
    from sidecar.front.gateway import HealthWatch, WatchHealth
    from sidecar.gate import SharedState

__all__ = ["Root"]

log = logging.getLogger(__name__)


class Root:
    """One process's faces and the observers they share. `transport`: `pipe` (stdio) or
    `tcp` (HTTP), as traces name it; `shares_store`: the front serves stateless callers,
    whose held results and confirmation states go to `store.url` when it is set."""

    def __init__(self, settings: Settings, transport: str, *, metrics: bool = False,
                 watch_health: WatchHealth | None = None, shares_store: bool = False) -> None:
        self.settings = settings
        self.tracing = _start_tracing(settings, transport)
        self.metrics = _front_metrics() if metrics else None
        self.watch_health = watch_health
        self.shares_store = shares_store

    @property
    def environ(self) -> Mapping[str, str]:
        """The environment as it was at start, for variables the config names."""
        return self.settings.environ

    def face(self, config: SidecarConfig, label: str | None = None, *, mounted: bool = False) -> Face:
        """The face for `config` (`mounted`: already cut to the servers that mount, as the
        stdio CLI does to start them early). `label`: its name on /metrics (a gateway's bot
        id; else the face's name)."""
        if not mounted:
            config = mountable(config, self.scheduled(config))  # a failed server is tried again at start
        observers = (self.metrics.observer(label or config.face.name),) if self.metrics is not None else ()
        options = FaceOptions(self.settings.environ, self._shared(config), observers, self.tracing)
        return build_face(config, options=options)

    def scheduled(self, config: SidecarConfig) -> bool:
        return self.watch_health is not None and config.health.schedule

    def health(self, face: Face, config: SidecarConfig) -> HealthWatch | None:
        """The health schedule of `face`, when it is on."""
        return self.watch_health(face, config) if self.watch_health is not None and self.scheduled(config) else None

    def show(self, face: Face, sessions: Any, label: str | None = None) -> None:
        """List `face` on /metrics (`sessions`: how many engine sessions it holds now)."""
        if self.metrics is not None:
            from sidecar.gate.observers.metrics import MetricsSource

            self.metrics.show(MetricsSource(face, sessions, name=label or ""))

    def shutdown(self) -> None:
        """Flush and stop the trace export (the last spans leave now)."""
        if self.tracing is not None:
            self.tracing.shutdown()

    def _shared(self, config: SidecarConfig) -> SharedState | None:
        """Held results, confirmation states and pins of this bot's face in `store.url`
        (shared by replicas serving the same bot; each caller identity keeps its own)."""
        if not (self.shares_store and config.store.url):
            return None
        from sidecar.errors import ConfigError
        from sidecar.store.share import shared_state

        try:
            return shared_state(config.store, f"{config.bot.id}/{config.face.name}")
        except ConfigError as exc:
            raise SystemExit(f"omb-sidecar: {exc.message}") from None


def _start_tracing(settings: Settings, transport: str) -> Any:
    """OpenTelemetry when OTLP export is configured; else None, nothing loaded."""
    if not settings.tracing:
        return None
    try:
        from sidecar.gate.observers.tracing import start_tracing
    except ImportError:
        log.warning("OTLP export is configured but opentelemetry is not installed (the [otel] extra): no traces")
        return None
    return start_tracing(transport, settings.service_named)


def _front_metrics() -> Any:
    try:
        from sidecar.gate.observers.metrics import FrontMetrics
    except ImportError:
        raise SystemExit("omb-sidecar: metrics.enabled needs prometheus_client (pip install 'omb-sidecar[metrics]')") from None
    return FrontMetrics()
