"""Traces in the MCP semantic conventions, exported over OTLP/HTTP to a local receiver that
decodes the protobuf: server and client spans, context from and into params._meta, the
gate's decision as attributes, the two duration histograms, nothing of the arguments or
results, no mcp.session.id; and with tracing off, nothing of opentelemetry loads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import aiohttp
import anyio
import pytest

from sidecar.config import ServerConfig
from sidecar.gate.observers.tracing import _client_attributes
from tests.cloud.cloud_support import Client, fault_entry, stateless_call, write_config
from tests.cloud.otlp_receiver import attributes, otlp_receiver
from tests.conftest import REPO, UPSTREAMS, child_env
from tests.http.http_support import TOKEN, open_http_sidecar

pytestmark = pytest.mark.timeout(120)
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"
CANARY = "argument-canary-31c9d2e7"
SERVER, CLIENT = 2, 3  # SpanKind in the protobuf


async def test_spans_follow_the_mcp_conventions_both_ways(tmp_path: Path) -> None:
    record = tmp_path / "upstream.jsonl"
    sdk = {"command": sys.executable, "args": [str(UPSTREAMS / "sdk_server.py"), "--name", "sdk"]}
    config = write_config(tmp_path, {"alpha": fault_entry(f"record={record}"), "sdk": sdk},
                          budgets={"resultChars": 2000}, grants={"deny": ["alpha__pid"]})
    async with otlp_receiver() as (endpoint, got):
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_BSP_SCHEDULE_DELAY": "50",
               "OTEL_METRIC_EXPORT_INTERVAL": "200", "OTEL_SERVICE_NAME": "sidecar-under-test"}
        async with open_http_sidecar(config, tmp_path, env=env) as sc, aiohttp.ClientSession() as http:
            client = Client(sc.base, TOKEN, http)
            await client.initialize()
            await client.tools()
            meta = {"traceparent": f"00-{TRACE_ID}-{PARENT}-01", "tracestate": "vendor=abc"}
            answer = await client.request("tools/call", {"name": "alpha__echo", "arguments": {"nonce": CANARY},
                                                         "_meta": meta})
            assert answer["result"]["structuredContent"]["nonce"] == CANARY
            await client.call("alpha__records", {"count": 300})
            await client.call("alpha__pid", {})
            await client.call("made_up_tool", {})
            await stateless_call(http, sc.base, TOKEN, "alpha__echo", {"nonce": CANARY})
            prompt = await client.request("prompts/get", {"name": "sdk__greet", "arguments": {"name": "ada"}})
            assert "result" in prompt, prompt
            await got.wait_for(lambda r: len(r.named("tools/call alpha__echo")) >= 2 and r.named("prompts/get greet") and
                               "mcp.client.operation.duration" in r.metrics and
                               "mcp.server.operation.duration" in r.metrics)

    server = next(s for s in got.named("tools/call alpha__echo") if s.trace_id.hex() == TRACE_ID)
    assert server.kind == SERVER and server.parent_span_id.hex() == PARENT
    seen = attributes(server)
    assert seen["mcp.method.name"] == "tools/call" and seen["gen_ai.tool.name"] == "alpha__echo"
    assert seen["network.transport"] == "tcp" and seen["mcp.protocol.version"] == "2025-11-25"
    assert seen["jsonrpc.request.id"] and seen["omb.gate.outcome"] == "completed"
    client_span = next(s for s in got.named("tools/call echo") if s.parent_span_id == server.span_id)
    assert client_span.kind == CLIENT and client_span.trace_id == server.trace_id
    assert attributes(client_span)["network.transport"] == "pipe"

    frames = [json.loads(json.loads(line)["raw"]) for line in record.read_text().splitlines()
              if json.loads(line)["event"] == "recv" and "tools/call" in line and CANARY in line]
    sent_on = frames[0]["params"]["_meta"]
    assert sent_on["traceparent"] == f"00-{TRACE_ID}-{client_span.span_id.hex()}-01"  # ours, in the same trace
    assert sent_on["tracestate"] == "vendor=abc"

    denied = attributes(got.named("tools/call alpha__pid")[0])
    assert "grant:deny" in denied["omb.gate.decisions"] and denied["error.type"]
    assert got.named("tools/call (unknown)") and not got.named("tools/call made_up_tool")
    held = attributes(got.named("tools/call alpha__records")[0])
    assert held["omb.gate.held"] is True and held["omb.gate.charge"] == "shaped"
    stateless = [s for s in got.named("tools/call alpha__echo") if s.trace_id.hex() != TRACE_ID]
    assert attributes(stateless[0])["mcp.protocol.version"] == "2026-07-28"
    assert got.named("initialize") and got.named("tools/list")
    asked = got.named("prompts/get sdk__greet")[0]
    forwarded = got.named("prompts/get greet")[0]  # the face forwards it: a client span too
    assert asked.kind == SERVER and forwarded.kind == CLIENT and forwarded.parent_span_id == asked.span_id
    assert all("mcp.session.id" not in attributes(s) for s in got.spans)
    assert all(CANARY.encode() not in body for body in got.bodies)  # no argument value, no result


def test_a_url_upstream_client_span_names_its_server() -> None:
    server = ServerConfig(alias="docs", type="http", url="https://mcp.example.com/mcp")
    seen = _client_attributes(server, "search", "tools/call")
    assert seen["server.address"] == "mcp.example.com" and seen["server.port"] == 443
    assert seen["network.transport"] == "tcp"


def test_tracing_off_loads_nothing_of_opentelemetry(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"alpha": fault_entry()})
    frames = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
                                                                       "capabilities": {}, "clientInfo": {"name": "t"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "alpha__echo",
                                                                       "arguments": {"nonce": "n"}}},
    ]
    errors = open(tmp_path / "stderr.txt", "w")  # importtime writes more than a pipe holds
    process = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "sidecar", "--config", str(config)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, text=True,
                               cwd=str(REPO), env=child_env())
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("".join(json.dumps(f) + "\n" for f in frames))
    process.stdin.flush()
    answered = False
    for line in process.stdout:  # the sidecar answers within its own deadlines; the test has a timeout
        if json.loads(line).get("id") == 2:
            answered = "result" in json.loads(line)
            break
    process.stdin.close()
    process.wait(timeout=30)
    errors.close()
    stderr = (tmp_path / "stderr.txt").read_text()
    assert answered
    imported = [line for line in stderr.splitlines() if line.startswith("import time:")]
    assert imported and not [line for line in imported if "opentelemetry" in line or "prometheus_client" in line
                             or "redis" in line]


def test_an_unreachable_collector_does_not_hold_the_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The exporters retry a refused collector for about 13 s; the sidecar's shutdown waits
    for the last spans and metrics no longer than its bound, then lets the process end."""
    import time

    from sidecar.gate.observers.tracing import Tracing

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")  # nothing listens there
    tracing = Tracing("pipe")
    with tracing.tracer.start_as_current_span("a call"):
        pass
    tracing.server_duration.record(0.1)
    began = time.monotonic()
    assert tracing.shutdown(within=0.5) is False  # still retrying: not waited for
    assert time.monotonic() - began < 5
