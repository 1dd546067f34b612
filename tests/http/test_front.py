"""The HTTP front as a real process: admission (token, Host, Origin, body cap), sessions
(ids, cap, idle expiry), timeouts, the health endpoint, 2026-07-28 requests, and the
drain on SIGTERM.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest
from tests.conftest import REPO, await_event, child_env, wait_until
from http_support import TOKEN, HttpSidecar, free_port, http_sidecar  # noqa: F401 - fixture

pytestmark = pytest.mark.timeout(120)

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
MODERN = "2026-07-28"
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


@pytest.fixture
def empty_config(tmp_path: Path) -> Path:
    path = tmp_path / "sidecar.json"
    path.write_text(json.dumps({"bot": {"id": "t", "engine": "claude"}, "mcpServers": {}}))
    return path


async def post(sc: HttpSidecar, body: Any, **headers: str) -> tuple[int, dict[str, str], bytes]:
    sent = sc.headers(**headers)
    for name in [k for k, v in sent.items() if v == ""]:
        del sent[name]
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    async with aiohttp.ClientSession() as client:
        async with client.post(sc.url, data=data, headers=sent) as response:
            return response.status, dict(response.headers), await response.read()


async def initialize(sc: HttpSidecar) -> str:
    status, headers, body = await post(sc, INIT)
    assert status == 200, body
    return headers["Mcp-Session-Id"]


async def test_refusals_get_their_status_and_a_good_request_right_after_is_served(http_sidecar, empty_config):
    env = {"OMB_HTTP_BODY_BYTES": "2048"}
    async with http_sidecar(empty_config, env=env) as sc:
        cases = [
            ({"Authorization": ""}, INIT, 401),
            ({"Authorization": "Bearer wrong-token-0123456789"}, INIT, 401),
            ({"Authorization": f"Basic {TOKEN}"}, INIT, 401),
            ({"Origin": "http://evil.example.com"}, INIT, 403),
            ({"Origin": "null"}, INIT, 403),
            ({"Host": "evil.example.com"}, INIT, 403),
            ({}, json.dumps({**INIT, "pad": "x" * 4096}).encode(), 413),
        ]
        for headers, body, status in cases:
            got, _, text = await post(sc, body, **headers)
            assert got == status, (headers, got, text)
            assert await initialize(sc)
        ok, _, _ = await post(sc, INIT, Origin="http://localhost:3000")
        assert ok == 200


async def test_an_oversized_body_without_a_length_is_cut_off_at_the_cap(http_sidecar, empty_config):
    async def chunks() -> Any:
        for _ in range(64):
            yield b" " * 1024

    async with http_sidecar(empty_config, env={"OMB_HTTP_BODY_BYTES": "4096"}) as sc:
        async with aiohttp.ClientSession() as client:
            async with client.post(sc.url, data=chunks(), headers=sc.headers()) as response:
                assert response.status == 413
        assert await initialize(sc)


async def test_sessions_have_unguessable_ids_a_cap_and_can_be_closed(http_sidecar, empty_config):
    async with http_sidecar(empty_config, env={"OMB_HTTP_MAX_SESSIONS": "2"}) as sc:
        first, second = await initialize(sc), await initialize(sc)
        assert first != second
        for ident in (first, second):
            assert len(base64.urlsafe_b64decode(ident + "=" * (-len(ident) % 4))) * 8 >= 128
        status, _, _ = await post(sc, INIT)
        assert status == 503
        async with aiohttp.ClientSession() as client:
            async with client.delete(sc.url, headers=sc.headers(**{"Mcp-Session-Id": first})) as response:
                assert response.status == 200
        assert await initialize(sc)
        status, _, _ = await post(sc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, **{"Mcp-Session-Id": first})
        assert status == 404
        status, _, _ = await post(sc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert status == 400


async def test_idle_sessions_expire(http_sidecar, empty_config):
    async with http_sidecar(empty_config, env={"OMB_HTTP_SESSION_IDLE_SECONDS": "0.3"}) as sc:
        ident = await initialize(sc)
        with anyio.fail_after(10):
            while True:
                status, _, _ = await post(sc, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                                          **{"Mcp-Session-Id": ident})
                if status == 404:
                    break
                await anyio.sleep(0.2)


async def test_slow_headers_and_slow_bodies_are_cut_off(http_sidecar, empty_config):
    env = {"OMB_HTTP_HEADER_SECONDS": "0.5", "OMB_HTTP_BODY_SECONDS": "0.5"}
    async with http_sidecar(empty_config, env=env) as sc:
        async with await anyio.connect_tcp("127.0.0.1", sc.port) as stream:
            await stream.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            with anyio.fail_after(5):
                with pytest.raises((anyio.EndOfStream, anyio.BrokenResourceError, ConnectionResetError)):
                    await stream.receive()
        async with await anyio.connect_tcp("127.0.0.1", sc.port) as stream:
            head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n"
                    "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
            await stream.send(head.encode())
            with anyio.fail_after(5):
                answer = await stream.receive()
            assert answer.startswith(b"HTTP/1.1 408")
        assert await initialize(sc)


async def test_health_says_ok_and_nothing_else(http_sidecar, tmp_path: Path):
    config = tmp_path / "sidecar.json"
    config.write_text(json.dumps({"bot": {"id": "secret-bot"}, "face": {"name": "hidden-face"}, "mcpServers": {
        "notes": {"type": "http", "url": "http://127.0.0.1:9/private-path", "headers": {"X-K": "v-123456"}}}}))
    async with http_sidecar(config) as sc:
        async with aiohttp.ClientSession() as client:
            async with client.get(f"{sc.base}/health") as response:
                body = await response.text()
                seen = body + json.dumps(dict(response.headers))
    assert response.status == 200 and body == "ok\n"
    for word in ("secret-bot", "hidden-face", "notes", "private-path", "v-123456", "127.0.0.1:9"):
        assert word not in seen


async def test_2026_07_28_requests_are_judged_on_the_body(http_sidecar, empty_config):
    async with http_sidecar(empty_config) as sc:
        def modern(method: str, **extra: str) -> dict[str, str]:
            return {"MCP-Protocol-Version": MODERN, "Mcp-Method": method, **extra}

        discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": ENVELOPE}}
        status, _, body = await post(sc, discover, **modern("server/discover"))
        result = json.loads(body)["result"]
        assert status == 200 and MODERN in result["supportedVersions"] and result["resultType"] == "complete"

        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": ENVELOPE}}
        status, headers, body = await post(sc, listing, **modern("tools/list"))
        assert status == 200 and "Mcp-Session-Id" not in headers
        assert json.loads(body)["result"]["resultType"] == "complete"

        status, _, body = await post(sc, listing, **modern("tools/call"))  # header says another method
        assert status == 400 and json.loads(body)["error"]["code"] == -32020

        status, _, body = await post(sc, listing, **{"MCP-Protocol-Version": "2025-11-25", "Mcp-Method": "tools/list"})
        assert status == 400 and json.loads(body)["error"]["code"] == -32020

        future = {"io.modelcontextprotocol/protocolVersion": "2099-01-01",
                  "io.modelcontextprotocol/clientCapabilities": {}}
        ask = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": future}}
        status, _, body = await post(sc, ask, **{"MCP-Protocol-Version": "2099-01-01", "Mcp-Method": "tools/list"})
        error = json.loads(body)["error"]
        assert status == 400 and error["code"] == -32022 and error["data"]["supported"] == [MODERN]

        call = {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                "params": {"name": "x", "arguments": {}, "_meta": ENVELOPE}}
        status, _, body = await post(sc, call, **modern("tools/call", **{"Mcp-Name": "y"}))
        assert status == 400 and json.loads(body)["error"]["code"] == -32020

        bare = {"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN}}}
        status, _, body = await post(sc, bare, **modern("tools/list"))
        assert status == 400 and json.loads(body)["error"]["code"] == -32602

        gone = {"jsonrpc": "2.0", "id": 6, "method": "initialize", "params": {**INIT["params"], "_meta": ENVELOPE}}
        status, _, body = await post(sc, gone, **modern("initialize"))
        assert status == 404 and json.loads(body)["error"]["code"] == -32601


async def test_sigterm_drains_calls_in_flight_then_exits(http_sidecar, sdk_server_entry, tmp_path: Path):
    config, events = tmp_path / "sidecar.json", tmp_path / "events.jsonl"
    config.write_text(json.dumps({"bot": {"id": "t"}, "face": {"listWaitSeconds": 20},
                                  "mcpServers": {"sdk": sdk_server_entry("sdk", "p_", events)}}))
    async with http_sidecar(config) as sc:
        ident = await initialize(sc)
        session = {"Mcp-Session-Id": ident}
        await post(sc, {"jsonrpc": "2.0", "method": "notifications/initialized"}, **session)
        _, _, body = await post(sc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, **session)
        assert "sdk__p_slow" in body.decode()
        outcome: dict[str, Any] = {}

        async def slow_call() -> None:
            call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                    "params": {"name": "sdk__p_slow", "arguments": {"seconds": 1.5}}}
            outcome["status"], _, outcome["body"] = await post(sc, call, Accept="application/json", **session)

        async with anyio.create_task_group() as group:
            group.start_soon(slow_call)
            await await_event(events, lambda e: e["event"] == "call" and e["tool"] == "p_slow", what="the slow call")
            os.kill(sc.process.pid, signal.SIGTERM)

            async def refused() -> bool:
                status, _, _ = await post(sc, {"jsonrpc": "2.0", "id": 4, "method": "tools/list"}, **session)
                return status == 503

            # new work is refused while the slow call (1.5 s) still runs
            await wait_until(refused, timeout=1.0, every=0.02, what="a 503 while draining")
            assert "status" not in outcome
        with anyio.fail_after(20):
            await sc.process.wait()
    assert outcome["status"] == 200 and "result" in json.loads(outcome["body"]), outcome
    assert sc.process.returncode == 128 + signal.SIGTERM  # stopped by a signal, and says so (issue 22)


async def test_start_is_refused_without_a_token_or_on_a_remote_address(empty_config, tmp_path: Path):
    base = [sys.executable, "-m", "sidecar", "--config", str(empty_config)]
    cases = [
        ([f"--http=127.0.0.1:{free_port()}"], {}, "needs a bearer token"),
        ([f"--http=0.0.0.0:{free_port()}", "--token-env", "T"], {"T": TOKEN}, "--allow-remote"),
        ([f"--http=127.0.0.1:{free_port()}", "--token-env", "T"], {"T": "short"}, "at least 16 characters"),
    ]
    for extra, env, words in cases:
        with anyio.fail_after(30):
            done = await anyio.run_process([*base, *extra], check=False, env=child_env(env), cwd=str(REPO))
        assert done.returncode != 0 and words in done.stderr.decode(), done.stderr
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    assert "--token" not in " ".join(a for a in base if a.startswith("--token="))


async def test_a_2026_07_28_listener_hears_that_tools_changed(http_sidecar, sdk_server_entry, tmp_path: Path):
    config = tmp_path / "sidecar.json"
    late = sdk_server_entry("late", "p_", None, "--startup-delay", "1.5")
    config.write_text(json.dumps({"bot": {"id": "t"}, "mcpServers": {"late": late}}))
    async with http_sidecar(config) as sc:
        listen = {"jsonrpc": "2.0", "id": "sub-1", "method": "subscriptions/listen",
                  "params": {"notifications": {"toolsListChanged": True, "resourceSubscriptions": ["x://y"]},
                             "_meta": ENVELOPE}}
        headers = sc.headers(**{"MCP-Protocol-Version": MODERN, "Mcp-Method": "subscriptions/listen"})
        events: list[dict[str, Any]] = []
        async with aiohttp.ClientSession() as client:
            async with client.post(sc.url, json=listen, headers=headers) as response:
                assert response.headers["Content-Type"].startswith("text/event-stream")
                with anyio.fail_after(30):
                    async for line in response.content:
                        if line.startswith(b"data: "):
                            events.append(json.loads(line[6:]))
                            if events[-1]["method"] == "notifications/tools/list_changed":
                                break
    ack = events[0]
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {"toolsListChanged": True}  # resource updates are not honoured
    assert all(e["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub-1" for e in events)
