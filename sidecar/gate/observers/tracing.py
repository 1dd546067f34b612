"""OpenTelemetry traces and the two MCP duration histograms, in the MCP semantic
conventions (the `[otel]` extra).

Owns: a SERVER span for each request an engine sends (`{mcp.method.name} {target}`,
with `mcp.method.name`, `gen_ai.tool.name`, `jsonrpc.request.id`, `mcp.protocol.version`,
`network.transport`, `error.type`), its parent taken from `params._meta`
(`traceparent`, `tracestate`, `baggage`); a CLIENT span for each request sent upstream
(the gate's `tools/call`, and the prompts, resources and completions the face forwards;
`server.address`/`server.port` for URL upstreams, `pipe` for commands), whose context
replaces the engine's in the `_meta` passed on; the gate's decision as
attributes of the server span (`omb.gate.*`); and the histograms
`mcp.server.operation.duration` and `mcp.client.operation.duration`, in seconds.

Refuses to record what a call carries: no argument values, no results, no reasons, and
a tool name the face does not know becomes `(unknown)` (span names stay low in
cardinality and free of what an engine typed). `mcp.session.id` is never set.

Export is OTLP over HTTP, configured the standard way (`OTEL_EXPORTER_OTLP_ENDPOINT`,
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_SERVICE_NAME`, `OTEL_BSP_*`...). This module
and opentelemetry load only when `sidecar.settings.Settings.tracing` says so; otherwise
nothing here runs.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import msgspec
from opentelemetry import propagate
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.metrics.view import ExplicitBucketHistogramAggregation, View
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, get_current_span

from sidecar import __version__
from sidecar.config import ServerConfig
from sidecar.errors import CallCancelled, SidecarError
from sidecar.gate.observers.labels import label_values
from sidecar.gate import Next, Observer, Stage, ToolCall

__all__ = ["Tracing", "start_tracing"]

# The conventions' advice for both operation histograms, in seconds.
BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
CONTEXT_KEYS = ("traceparent", "tracestate", "baggage")
UNKNOWN = "(unknown)"
_NAMED_BY = {"tools/call": "gen_ai.tool.name", "prompts/get": "gen_ai.prompt.name"}
_METRIC_KEYS = ("mcp.method.name", "gen_ai.tool.name", "gen_ai.prompt.name", "mcp.protocol.version",
                "network.transport", "error.type", "server.address", "server.port")
Handler = Callable[[Any, Any, Any], Awaitable[Any]]


def start_tracing(transport: str, service_named: bool = False) -> Tracing | None:
    """Traces when the extra is installed; None when not. The composition root gives each
    face's gate `gate_parts` and each face the tracing itself."""
    try:
        return Tracing(transport, service_named)
    except ImportError:  # pragma: no cover - the extra is part of the test install
        return None


SHUTDOWN_SECONDS = 2.0  # the most an exit waits for the last spans and metrics to leave


class Tracing:
    def __init__(self, transport: str, service_named: bool = False) -> None:
        """`transport`: `pipe` for the stdio front, `tcp` for HTTP; `service_named`:
        OTEL_SERVICE_NAME is set (`sidecar.settings`), so spans keep the operator's name."""
        self.transport = transport
        resource = Resource.create({} if service_named else {"service.name": "omb-sidecar"})
        self.spans = TracerProvider(resource=resource, shutdown_on_exit=False)  # `shutdown` bounds the exit
        self.spans.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        self.tracer = self.spans.get_tracer("omb-sidecar", __version__)
        view = View(instrument_name="mcp.*.operation.duration", aggregation=ExplicitBucketHistogramAggregation(BUCKETS))
        reader = PeriodicExportingMetricReader(OTLPMetricExporter())
        self.meters = MeterProvider(resource=resource, metric_readers=[reader], views=[view], shutdown_on_exit=False)
        meter = self.meters.get_meter("omb-sidecar", __version__)
        self.server_duration = meter.create_histogram(
            "mcp.server.operation.duration", unit="s", description="MCP request duration as the sidecar served it")
        self.client_duration = meter.create_histogram(
            "mcp.client.operation.duration", unit="s", description="MCP request duration as sent to an upstream")
        self.propagator = propagate.get_global_textmap()
        self._shut = False
        import atexit

        atexit.register(self.shutdown)  # an exit no root's `shutdown` reached still flushes, within the bound

    def gate_parts(self, servers: Callable[[], Mapping[str, ServerConfig]]) -> tuple[Stage, Observer]:
        """A client span around each call upstream, and the gate's decision on the server
        span: what a face's gate is built with. `servers`: the mounted servers, as now."""
        return self._client_stage(servers), _decision_on_span

    def shutdown(self, within: float = SHUTDOWN_SECONDS) -> bool:
        """Flush what is left and stop, waiting at most `within` seconds: an unreachable
        collector makes the exporters retry for about 13 s, which must not hold the
        sidecar's exit (the flush goes on in a daemon thread meanwhile, and ends with the
        process). True when it ended in time; once (a second call returns at once)."""
        if self._shut:
            return True
        self._shut = True
        import threading

        ended = threading.Event()

        def flush() -> None:
            try:
                self.spans.shutdown()
                self.meters.shutdown()
            finally:
                ended.set()

        threading.Thread(target=flush, name="tracing shutdown", daemon=True).start()
        return ended.wait(within)

    # -- server spans ------------------------------------------------------------------

    def wrap(self, handler: Handler) -> Handler:
        async def traced(d: Any, req: Any, params: Any) -> Any:
            attributes = self._server_attributes(d, req)
            name = " ".join(filter(None, (req.method, attributes.get(_NAMED_BY.get(req.method, "")))))
            parent = self.propagator.extract(_context_of(req.params.get("_meta")))
            started = time.perf_counter()
            with self.tracer.start_as_current_span(name, context=parent, kind=SpanKind.SERVER, attributes=attributes,
                                                   record_exception=False, set_status_on_exception=False) as span:
                try:
                    result = await handler(d, req, params)
                except CallCancelled:
                    _failed(span, attributes, "cancelled", "")
                    raise
                except SidecarError as exc:
                    _failed(span, attributes, str(exc.code), d.redact(exc.message))
                    raise
                finally:
                    if d.session.protocol_version:
                        attributes["mcp.protocol.version"] = d.session.protocol_version
                        span.set_attribute("mcp.protocol.version", d.session.protocol_version)
                    self.server_duration.record(time.perf_counter() - started, _metric_attributes(attributes))
                if req.method == "tools/call" and _is_tool_error(result):
                    span.set_attribute("error.type", "tool_error")
                    span.set_status(Status(StatusCode.ERROR))
                return result

        return traced

    def _server_attributes(self, d: Any, req: Any) -> dict[str, Any]:
        attributes: dict[str, Any] = {"mcp.method.name": req.method, "jsonrpc.request.id": str(req.id),
                                      "network.transport": self.transport}
        if self.transport == "tcp":
            attributes["network.protocol.name"] = "http"
        if d.session.protocol_version:
            attributes["mcp.protocol.version"] = d.session.protocol_version
        key = _NAMED_BY.get(req.method)
        if key is not None:
            attributes[key] = _known_name(d.face, req.method, req.params.get("name"))
        if req.method == "tools/call":
            attributes["gen_ai.operation.name"] = "execute_tool"
        return attributes

    # -- client spans ----------------------------------------------------------------------

    async def forward(self, send: Callable[[dict[str, Any]], Awaitable[msgspec.Raw]], params: dict[str, Any],
                      server: ServerConfig, method: str) -> msgspec.Raw:
        """A request the face forwards upstream as it is (prompts, resources, completions)."""
        attributes = _client_attributes(server, None, method)
        name = params.get("name")
        if method == "prompts/get" and isinstance(name, str):
            attributes["gen_ai.prompt.name"] = name  # the upstream's own name, from its listing
        started = time.perf_counter()
        with self.tracer.start_as_current_span(" ".join(filter(None, (method, attributes.get("gen_ai.prompt.name")))),
                                               kind=SpanKind.CLIENT, attributes=attributes,
                                               record_exception=False, set_status_on_exception=False) as span:
            carrier: dict[str, str] = {}
            self.propagator.inject(carrier)
            meta = {k: v for k, v in (params.get("_meta") or {}).items() if k not in CONTEXT_KEYS}
            try:
                return await send({**params, "_meta": {**meta, **carrier}})
            except SidecarError as exc:
                _failed(span, attributes, str(exc.code), "")
                raise
            finally:
                self.client_duration.record(time.perf_counter() - started, _metric_attributes(attributes))

    def _client_stage(self, servers: Callable[[], Mapping[str, ServerConfig]]) -> Stage:
        async def client_span(call: ToolCall, call_next: Next) -> ToolCall:
            target = call.target
            if target is None:
                return await call_next(call)
            attributes = _client_attributes(servers().get(target.alias), target.name, "tools/call")
            started = time.perf_counter()
            with self.tracer.start_as_current_span(f"tools/call {target.name}", kind=SpanKind.CLIENT,
                                                   attributes=attributes, record_exception=False) as span:
                carrier: dict[str, str] = {}
                self.propagator.inject(carrier)
                kept = {k: v for k, v in (call.meta or {}).items() if k not in CONTEXT_KEYS}
                call.meta = {**kept, **carrier}
                await call_next(call)
                if call.outcome == "failed" and call.error is not None:
                    _failed(span, attributes, str(call.error.code), "")
                elif _is_tool_error(call.result):
                    _failed(span, attributes, "tool_error", "")
            # split by the name the engine sees, as /metrics is (the upstream's own is the span's)
            self.client_duration.record(time.perf_counter() - started,
                                        _metric_attributes({**attributes, "gen_ai.tool.name": target.exposed}))
            return call

        return client_span


def _client_attributes(server: ServerConfig | None, tool: str | None, method: str) -> dict[str, Any]:
    attributes: dict[str, Any] = {"mcp.method.name": method, "network.transport": "pipe"}
    if tool is not None:
        attributes["gen_ai.tool.name"] = tool
        attributes["gen_ai.operation.name"] = "execute_tool"
    if server is not None and server.url:
        parts = urlsplit(server.url)
        attributes["network.transport"] = "tcp"
        attributes["network.protocol.name"] = "http"
        if parts.hostname:
            attributes["server.address"] = parts.hostname
            attributes["server.port"] = parts.port or (443 if parts.scheme == "https" else 80)
    return attributes


def _decision_on_span(call: ToolCall) -> None:
    """What the gate decided, on the server span of the request (never a reason or a value)."""
    span = get_current_span()
    if not span.is_recording():
        return
    span.set_attribute("omb.gate.outcome", call.outcome or "")
    span.set_attribute("omb.gate.decisions", [f"{stage}:{action}" for stage, action, _ in call.decisions])
    if call.charge:
        span.set_attribute("omb.gate.charge", call.charge)
    span.set_attribute("omb.gate.held", call.handle is not None)
    if call.target is not None:
        span.set_attribute("omb.gate.upstream", call.target.alias)
    if call.via:
        span.set_attribute("omb.gate.via", call.via)


def _failed(span: Span, attributes: dict[str, Any], kind: str, description: str) -> None:
    attributes["error.type"] = kind
    span.set_attribute("error.type", kind)
    if kind.lstrip("-").isdigit():
        span.set_attribute("rpc.response.status_code", kind)
    span.set_status(Status(StatusCode.ERROR, description or None))


def _known_name(face: Any, method: str, name: object) -> str:
    if not isinstance(name, str):
        return UNKNOWN
    if method == "prompts/get":
        return name if name in face.catalog.by_prompt else UNKNOWN
    known = face.catalog.tool(name) is not None or name in face.listing.meta or name == "query_result"
    return name if known else UNKNOWN


def _context_of(meta: object) -> dict[str, str]:
    if not isinstance(meta, dict):
        return {}
    return {k: v for k in CONTEXT_KEYS if isinstance(v := meta.get(k), str) and len(v) <= 512}


def _metric_attributes(attributes: dict[str, Any]) -> dict[str, Any]:
    """The attributes a histogram is split by, each string capped as every label is."""
    return {k: label_values(v)[0] if isinstance(v := attributes[k], str) else v
            for k in _METRIC_KEYS if k in attributes}


def _is_tool_error(result: object) -> bool:
    """An `isError: true` result (the sidecar's own encodings write it without spaces)."""
    if isinstance(result, dict):
        return result.get("isError") is True
    if isinstance(result, bytes | msgspec.Raw):
        view = memoryview(result)
        return b'"isError":true' in view.tobytes() if len(view) < 65536 else b'"isError":true' in view[-256:].tobytes()
    return False
