"""A local OTLP/HTTP receiver for the trace tests: it takes `/v1/traces` and `/v1/metrics`
POSTs on 127.0.0.1, decodes the protobuf (opentelemetry-proto), and keeps every span,
every metric name and every raw body (so canaries can be looked for in what was sent)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from aiohttp import web
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.http.http_support import free_port


@dataclass
class Received:
    spans: list[Any] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    bodies: list[bytes] = field(default_factory=list)

    def named(self, name: str) -> list[Any]:
        return [s for s in self.spans if s.name == name]

    async def wait_for(self, check: Any, timeout: float = 20.0) -> None:
        with anyio.fail_after(timeout):
            while not check(self):
                await anyio.sleep(0.05)


def attributes(span: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for item in span.attributes:
        value = item.value
        kind = value.WhichOneof("value")
        if kind == "array_value":
            found[item.key] = [v.string_value for v in value.array_value.values]
        else:
            found[item.key] = getattr(value, kind)
    return found


@asynccontextmanager
async def otlp_receiver() -> AsyncIterator[tuple[str, Received]]:
    received = Received()

    async def traces(request: web.Request) -> web.Response:
        body = await request.read()
        received.bodies.append(body)
        message = ExportTraceServiceRequest.FromString(body)
        for resource in message.resource_spans:
            for scope in resource.scope_spans:
                received.spans.extend(scope.spans)
        return web.Response(body=b"", content_type="application/x-protobuf")

    async def metrics(request: web.Request) -> web.Response:
        body = await request.read()
        received.bodies.append(body)
        message = ExportMetricsServiceRequest.FromString(body)
        for resource in message.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    received.metrics[metric.name] = metric
        return web.Response(body=b"", content_type="application/x-protobuf")

    app = web.Application()
    app.router.add_post("/v1/traces", traces)
    app.router.add_post("/v1/metrics", metrics)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield f"http://127.0.0.1:{port}", received
    finally:
        await runner.cleanup()
