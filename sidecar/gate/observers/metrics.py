"""`GET /metrics`: the HTTP front's figures in the Prometheus text format.

Owns one private registry per front (never the library's global one, so two fronts in
one process or one test do not mix), the call counter and duration histogram fed by the
gate's record stage through its observer seam, and a collector that reads, at scrape
time only, what the face already knows: each upstream's state and restarts, the bytes
held per upstream, open sessions, notifications dropped toward slow engines.

Label values are bounded by construction: `upstream` is a configured alias or
`sidecar` (the sidecar's own tools), `tool` the name the engine sees for a tool of the
face's catalog (never the upstream's own name, which an upstream chooses freely) or one
of the sidecar's own, and a name the catalog does not know folds into `(unknown)`.
Nothing a caller chose freely (arguments, handles, unknown names) becomes a label, and
no bot, secret, address or header ever does. Every label value, of every family, passes
`label_values`, which caps each at `LABEL_CAP` characters (a cut value keeps a digest of
the whole, so two long names stay two series). A tool's series go when the tool leaves
its face's catalog, an upstream's when it leaves the face (both read at scrape time).

Loaded only when `metrics.enabled` is set: `prometheus_client` (the `[metrics]` extra)
is imported here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from sidecar.gate.observers.labels import LABEL_CAP, label_values
from sidecar.catalog import Catalog
from sidecar.gate import Gate, ToolCall
from sidecar.upstream import Pool
from sidecar.upstream.lifecycle import UpstreamState
from sidecar.wire.outbox import DROPPED_IN_PROCESS

__all__ = ["CONTENT_TYPE", "LABEL_CAP", "FrontMetrics", "MetricsSource", "label_values", "labels_of", "outcome_of"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
UNKNOWN = "(unknown)"
OWN = "sidecar"
STATES: tuple[UpstreamState, ...] = ("starting", "ready", "restarting", "failed", "paused", "stopped")
# Tool calls run from tens of microseconds (a local answer) to minutes (search work).
BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
           120.0)
_REFUSING = frozenset({"deny", "confirm", "refuse"})


class ObservedFace(Protocol):
    """What `/metrics` reads of a face (a `sidecar.hub.face.Face`, which sits above the gate)."""

    @property
    def name(self) -> str: ...

    @property
    def gate(self) -> Gate: ...

    @property
    def pool(self) -> Pool: ...

    @property
    def catalog(self) -> Catalog: ...


@dataclass
class MetricsSource:
    """One face behind the front, how to count its open sessions, and its label (the
    face's name; a gateway labels each bot's face by the bot's id)."""

    face: ObservedFace
    sessions: Callable[[], int]
    name: str = ""

    @property
    def label(self) -> str:
        return self.name or self.face.name


def outcome_of(call: ToolCall) -> str:
    """completed, denied, failed or held: what the call came to, for counting."""
    if any(action in _REFUSING for _, action, _ in call.decisions):
        return "denied"
    if call.outcome == "failed":
        return "failed"
    return "held" if call.handle is not None else "completed"


def labels_of(call: ToolCall) -> tuple[str, str]:
    """(upstream, tool), each from a bounded set; the tool by the name the engine sees."""
    if call.target is not None:
        return call.target.alias, call.target.exposed
    if call.local is not None:
        return OWN, call.local
    return OWN, UNKNOWN


@dataclass
class _Written:
    """The label values each call family holds, so series can be dropped with their tool."""

    calls: set[tuple[str, ...]] = field(default_factory=set)  # (face, upstream, tool, outcome)
    durations: set[tuple[str, ...]] = field(default_factory=set)  # (face, upstream)


class FrontMetrics:
    def __init__(self, sources: Sequence[MetricsSource] = ()) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.sources = list(sources)
        self.calls = Counter("omb_tool_calls", "Tool calls by upstream, tool and outcome.",
                             ["face", "upstream", "tool", "outcome"], registry=self.registry)
        self.duration = Histogram("omb_tool_call_duration_seconds", "Time from a call's arrival to its answer.",
                                  ["face", "upstream"], buckets=BUCKETS, registry=self.registry)
        self.written = _Written()
        self.registry.register(_FaceCollector(self.sources))

    def watch(self, source: MetricsSource) -> None:
        """Count `source`'s calls from now on (a face built without `observer`'s)."""
        self.show(source)
        source.face.gate.observe(self.observer(source.label))

    def show(self, source: MetricsSource) -> None:
        """Show `source`'s face on /metrics; its gate was built with `observer(label)`."""
        if source not in self.sources:
            self.sources.append(source)

    def observer(self, face: str) -> Callable[[ToolCall], None]:
        """What counts the calls of the face labelled `face`, given to its gate at construction."""
        calls, duration, written = self.calls, self.duration, self.written

        def seen(call: ToolCall) -> None:
            upstream, tool = labels_of(call)
            call_labels = tuple(label_values(face, upstream, tool, outcome_of(call)))
            calls.labels(*call_labels).inc()
            written.calls.add(call_labels)
            duration_labels = call_labels[:2]
            duration.labels(*duration_labels).observe(call.seconds)
            written.durations.add(duration_labels)

        return seen

    def render(self) -> bytes:
        self.drop_departed()
        return generate_latest(self.registry)

    def drop_departed(self) -> None:
        """Drop the series of tools no longer in their face's catalog and of upstreams no
        longer in their face (a list change, an unmount): what /metrics shows is what is there."""
        present = {label_values(source.label)[0]: _present(source) for source in self.sources}
        for labels in [labels for labels in self.written.calls if _departed(labels, present)]:
            self.written.calls.discard(labels)
            self.calls.remove(*labels)
        for labels in [labels for labels in self.written.durations if _departed(labels, present)]:
            self.written.durations.discard(labels)
            self.duration.remove(*labels)


def _present(source: MetricsSource) -> tuple[set[str], set[str]]:
    """The face's upstreams and tools, as labels."""
    face = source.face
    upstreams = set(label_values(*(upstream.alias for upstream in face.pool)))
    return upstreams, set(label_values(*(entry.exposed for entry in face.catalog.tools)))


def _departed(labels: tuple[str, ...], present: dict[str, tuple[set[str], set[str]]]) -> bool:
    """Whether a series names an upstream or a tool its face no longer has (the sidecar's
    own tools and `(unknown)` never leave)."""
    face, upstream = labels[0], labels[1]
    known = present.get(face)
    if known is None or upstream == OWN:
        return False
    upstreams, tools = known
    if upstream not in upstreams:
        return True
    return len(labels) > 2 and labels[2] != UNKNOWN and labels[2] not in tools


class _FaceCollector(Collector):
    """What the faces know, read at scrape time: nothing is kept up to date between scrapes."""

    def __init__(self, sources: list[MetricsSource]) -> None:
        self.sources = sources

    def describe(self) -> Iterable[Metric]:
        return list(self._families())

    def collect(self) -> Iterable[Metric]:
        families = self._families()
        for source in self.sources:
            _fill(families, source)
        families.dropped.add_metric([], float(DROPPED_IN_PROCESS[0]))
        return list(families)

    @staticmethod
    def _families() -> _Families:
        return _Families(
            state=GaugeMetricFamily("omb_upstream_state", "1 for the state each upstream is in.",
                                    labels=["face", "upstream", "state"]),
            restarts=CounterMetricFamily("omb_upstream_restarts", "Stops of a started upstream (each is restarted).",
                                         labels=["face", "upstream"]),
            held=GaugeMetricFamily("omb_held_bytes", "Bytes of results held for query_result.",
                                   labels=["face", "upstream"]),
            sessions=GaugeMetricFamily("omb_sessions", "Engine sessions open on the HTTP front.", labels=["face"]),
            dropped=CounterMetricFamily("omb_notifications_dropped",
                                        "Frames dropped toward engines that did not read them (whole process)."),
        )


@dataclass
class _Families:
    state: GaugeMetricFamily
    restarts: CounterMetricFamily
    held: GaugeMetricFamily
    sessions: GaugeMetricFamily
    dropped: CounterMetricFamily

    def __iter__(self) -> Iterator[Metric]:
        return iter((self.state, self.restarts, self.held, self.sessions, self.dropped))


def _fill(families: _Families, source: MetricsSource) -> None:
    face = source.face
    held = face.gate.held
    for upstream in face.pool:
        for state in STATES:
            families.state.add_metric(label_values(source.label, upstream.alias, state),
                                      1.0 if upstream.state == state else 0.0)
        families.restarts.add_metric(label_values(source.label, upstream.alias), float(upstream.restarts))
        families.held.add_metric(label_values(source.label, upstream.alias), float(held.held_bytes(upstream.alias)))
    families.held.add_metric(label_values(source.label, OWN), float(held.held_bytes(OWN)))
    families.sessions.add_metric(label_values(source.label), float(source.sessions()))
