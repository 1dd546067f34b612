"""An HTTP client that opens a stream and does not read it cannot grow the sidecar
(issue 12, class 3).

A real HTTP sidecar, a real upstream flooding notifications (`spew` of
tests/upstreams/fault_server.py), and a client on a raw socket that opens the session's
GET stream, or a POST whose answer is an event stream, and never reads it. The
sidecar's RSS, sampled from /proc during the flood, stays within its baseline plus
64 MB; the session keeps serving; when the client reads again, what it is owed (the
answer at the end of the POST's stream) is there.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "front"))
from flood_support import BUDGET, MB, FloodShape, RssSampler, rss  # noqa: E402
from http_support import HttpSidecar, open_http_sidecar  # noqa: E402

from tests.conftest import await_event  # noqa: E402

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

# (A flood of resource updates reaches only sessions subscribed to its URIs; one that reaches
# a GET stream is shed there as these are: tests/hub/test_http_session_core.py.)
GET_SHAPES = [
    FloodShape("notifications/message", 6_000, 24 * 1024),
]
PROGRESS_SHAPE = FloodShape("notifications/progress", 120_000, 1_000)
FLOOD_WAIT = 240.0


async def _post(client: aiohttp.ClientSession, sc: HttpSidecar, body: dict[str, Any], session: str | None,
                accept: str = "application/json, text/event-stream", timeout: float = 30.0) -> dict[str, Any]:
    headers = sc.headers(Accept=accept, **({"Mcp-Session-Id": session} if session else {}))
    with anyio.fail_after(timeout):
        async with client.post(sc.url, json={"jsonrpc": "2.0", **body}, headers=headers) as response:
            assert response.status in (200, 202), await response.text()
            if response.status == 202:
                return {"session": response.headers.get("Mcp-Session-Id")}
            text = await response.text()
            if response.content_type == "text/event-stream":
                frames = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
                text = json.dumps(next(f for f in frames if f.get("id") == body.get("id")))
            answer: dict[str, Any] = json.loads(text)
            answer["session"] = response.headers.get("Mcp-Session-Id")
            return answer


async def _ready_session(client: aiohttp.ClientSession, sc: HttpSidecar) -> str:
    init = await _post(client, sc, {"id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "flood", "version": "1"}}}, None)
    session = init["session"]
    await _post(client, sc, {"method": "notifications/initialized"}, session)
    with anyio.fail_after(30):
        while True:
            listed = await _post(client, sc, {"id": "list", "method": "tools/list"}, session)
            if any(t["name"] == "fault__spew" for t in listed["result"]["tools"]):
                return str(session)
            await anyio.sleep(0.1)  # bounded above: the upstream is still starting


async def _raw(sc: HttpSidecar, method: str, session: str, body: bytes = b"",
               accept: str = "text/event-stream") -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A request on a raw socket whose answer nobody reads until the test says so."""
    reader, writer = await asyncio.open_connection("127.0.0.1", sc.port)
    head = (f"{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{sc.port}\r\nAuthorization: Bearer {sc.token}\r\n"
            f"Accept: {accept}\r\nMcp-Session-Id: {session}\r\n")
    if body:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    writer.write(head.encode() + b"\r\n" + body)
    await writer.drain()
    return reader, writer


async def _read_until(reader: asyncio.StreamReader, needle: bytes, timeout: float) -> bytes:
    seen = bytearray()
    with anyio.fail_after(timeout):
        while needle not in seen:
            chunk = await reader.read(1 << 20)
            assert chunk, "the stream ended before what it owed arrived"
            seen += chunk[-(len(needle) + (1 << 20)):]
            del seen[: max(0, len(seen) - 2 * (1 << 20))]
    return bytes(seen)


@pytest.mark.parametrize("shape", GET_SHAPES, ids=str)
async def test_a_get_stream_that_is_never_read_stays_within_budget(
    shape: FloodShape, tmp_path: Path, write_config: Any, fault_server_entry: Any,
) -> None:
    config = write_config({"fault": fault_server_entry("spew")})
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc, aiohttp.ClientSession() as client:
        session = await _ready_session(client, sc)
        reader, writer = await _raw(sc, "GET", session)
        with anyio.fail_after(10):
            head = await reader.readuntil(b"\r\n\r\n")  # the stream is open; from here on, nobody reads it
        assert head.startswith(b"HTTP/1.1 200") and b"text/event-stream" in head
        baseline = rss(sc.process.pid)
        with RssSampler(sc.process.pid) as sampler:
            # JSON only: the flood's log messages then go to the GET stream, not to this POST
            done = await _post(client, sc, {"id": "flood", "method": "tools/call", "params": {
                "name": "fault__spew", "arguments": shape.arguments("flooded")}}, session,
                accept="application/json", timeout=FLOOD_WAIT)
        grown = sampler.peak - baseline
        print(f"GET {shape}: {shape.total / MB:.0f} MB; RSS baseline {baseline / MB:.1f} MB, "
              f"peak {sampler.peak / MB:.1f} MB (+{grown / MB:.1f} MB)")
        assert done["result"]["content"][0]["text"] == "flooded"
        assert grown <= BUDGET, f"RSS grew by {grown / MB:.1f} MB"
        echoed = await _post(client, sc, {"id": "after", "method": "tools/call", "params": {
            "name": "fault__echo", "arguments": {"nonce": "after"}}}, session)
        assert "after" in json.dumps(echoed["result"])
        await _read_until(reader, b"event: message", 30)  # the stream still carries frames
        writer.close()
        assert "GET stream is not reading fast enough" in sc.stderr


async def test_a_post_event_stream_that_is_never_read_keeps_its_answer(
    tmp_path: Path, write_config: Any, fault_server_entry: Any,
) -> None:
    record = tmp_path / "upstream.jsonl"
    config = write_config({"fault": fault_server_entry("spew", f"record={record}")})
    shape = PROGRESS_SHAPE
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc, aiohttp.ClientSession() as client:
        session = await _ready_session(client, sc)
        body = json.dumps({"jsonrpc": "2.0", "id": "flood", "method": "tools/call", "params": {
            "name": "fault__spew", "arguments": shape.arguments("owed"), "_meta": {"progressToken": "p"}}}).encode()
        baseline = rss(sc.process.pid)
        with RssSampler(sc.process.pid) as sampler:
            reader, writer = await _raw(sc, "POST", session, body, accept="application/json, text/event-stream")
            await await_event(record, lambda e: e["event"] == "spewed", timeout=FLOOD_WAIT, what="the end of the flood")
            echoed = await _post(client, sc, {"id": "meanwhile", "method": "tools/call", "params": {
                "name": "fault__echo", "arguments": {"nonce": "meanwhile"}}}, session)
        grown = sampler.peak - baseline
        print(f"POST stream {shape}: {shape.total / MB:.0f} MB; RSS baseline {baseline / MB:.1f} MB, "
              f"peak {sampler.peak / MB:.1f} MB (+{grown / MB:.1f} MB)")
        assert grown <= BUDGET, f"RSS grew by {grown / MB:.1f} MB"
        assert "meanwhile" in json.dumps(echoed["result"])
        tail = await _read_until(reader, b'"id":"flood"', 60)  # read at last: the answer is there
        assert b"owed" in tail
        writer.close()
        assert "answer stream is not reading fast enough" in sc.stderr
