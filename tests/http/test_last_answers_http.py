"""Calls in flight when an HTTP sidecar is told to stop each get their one answer (issue 22,
class 11; RELIABILITY rule 4), with the real process: after the drain time, a session's
JSON answer, a session's open event stream (it carries the error before it ends) and a
stateless 2026-07-28 request all get an error with their id naming SIGTERM, and the
process exits with 128 + 15."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest

from tests.conftest import wait_until
from tests.http.http_support import open_http_sidecar

pytestmark = pytest.mark.e2e

MODERN = "2026-07-28"


async def _open_session(http: aiohttp.ClientSession, sc: Any) -> dict[str, str]:
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"roots": {}}, "clientInfo": {"name": "t", "version": "1"}}}
    async with http.post(sc.url, json=init, headers=sc.headers()) as response:
        assert response.status == 200, await response.text()
        headers = sc.headers(**{"Mcp-Session-Id": response.headers["Mcp-Session-Id"],
                                "MCP-Protocol-Version": "2025-11-25"})
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    async with http.post(sc.url, json=note, headers=headers) as response:
        assert response.status == 202
    return headers


def _frames(body: bytes, content_type: str) -> list[dict[str, Any]]:
    if content_type == "application/json":
        return [json.loads(body)]
    return [json.loads(line[5:]) for line in body.decode().splitlines() if line.startswith("data:")]


async def _post(http: aiohttp.ClientSession, url: str, body: dict[str, Any], headers: dict[str, str]) -> list[dict]:
    async with http.post(url, json=body, headers=headers) as response:
        return _frames(await response.read(), response.content_type)


def _call(ident: str, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}


async def test_sigterm_answers_session_stream_and_stateless_calls_then_exits_143(
        write_config: Any, fault_server_entry: Any, tmp_path: Path) -> None:
    record = tmp_path / "upstream.jsonl"
    config = write_config({"f": {**fault_server_entry(f"record={record}"), "pinning": "off"}})
    env = {"OMB_HTTP_DRAIN_SECONDS": "0.3"}
    async with open_http_sidecar(config, tmp_path, env=env, log_level="INFO") as sc, \
            aiohttp.ClientSession() as http:
        session = await _open_session(http, sc)
        modern = sc.headers(**{"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "f__sleep"})
        envelope = {"io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": {}}
        posts = [
            _post(http, sc.url, _call("json-call", "f__sleep", {"seconds": 60}), session),
            _post(http, sc.url, _call("stream-call", "f__ask", {"method": "roots/list"}), session),
            _post(http, sc.url, _call("stateless-call", "f__sleep", {"seconds": 60}, envelope), modern),
        ]
        answers = [asyncio.ensure_future(post) for post in posts]
        await wait_until(lambda: record.exists() and record.read_text().count('\\"tools/call\\"') >= 3,
                         what="three calls at the upstream")
        sc.process.send_signal(signal.SIGTERM)
        with anyio.fail_after(20):
            json_frames, stream_frames, stateless_frames = await asyncio.gather(*answers)
            code = await sc.process.wait()
        assert code == 128 + signal.SIGTERM
        assert stream_frames[0].get("method") == "roots/list"  # the stream was open before the end
        for ident, frames in (("json-call", json_frames), ("stream-call", stream_frames),
                              ("stateless-call", stateless_frames)):
            answers_to = [f for f in frames if f.get("id") == ident and "method" not in f]
            assert len(answers_to) == 1, frames
            message = answers_to[0]["error"]["message"]
            assert "shutting down" in message and "SIGTERM" in message
        assert "Traceback" not in sc.stderr


async def test_a_refused_body_names_the_request_it_could_read(write_config: Any, tmp_path: Path) -> None:
    config = write_config({})
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc, aiohttp.ClientSession() as http:
        for body, ident in ((b'{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"arguments":{"n":1e400}}}', "big"),
                            (b'{"jsonrpc":"2.0","id":9,"method":"ping","params":{"v":NaN}}', 9)):
            async with http.post(sc.url, data=body, headers=sc.headers()) as response:
                answer = await response.json()
            assert response.status == 400 and answer["id"] == ident and answer["error"]["code"] == -32700
