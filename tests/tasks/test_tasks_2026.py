"""The 2026 tasks extension (`io.modelcontextprotocol/tasks`) through the sidecar, each
cell with real peers: a 2026-07-28 engine (stateless HTTP front) and a 2026 server (the
`mcp` SDK's low-level server with the extension: tests/tasks/tasks_server_2026.py); a
2025-11-25 engine (stdio) and that 2026 server; a 2026 engine and a 2025-11-25 server (npm
`server-everything`, on stdio and over Streamable HTTP). The task is created by a call that passed the gate, under an
id namespaced by its upstream, read, answered and cancelled in the engine's own shape, and
stays with the caller that made it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest

from tests.conftest import read_event_file
from tests.http.http_support import HttpSidecar, http_sidecar  # noqa: F401 - fixture
from tests.apps.session_peer import ENVELOPE
from tests.tasks.modern_tasks import DECLARED, T26, TASKS, modern_requester, open_tasks_server, settled
from tests.tasks.task_story import EV, RESEARCH, unknown
from tests.tasks.test_tasks_url import everything_over_http

pytestmark = pytest.mark.timeout(120)
OTHER = "other-token-0123456789abcdef"
WAIT = aiohttp.ClientTimeout(total=20)
ANSWER = {"who": {"action": "accept", "content": {"name": "ada"}}}


def _created(answer: dict[str, Any], alias: str) -> str:
    made = answer["result"]
    assert made["resultType"] == "task" and "task" not in made and made["taskId"].startswith(f"{alias}~"), answer
    assert {"createdAt", "lastUpdatedAt", "ttlMs"} <= set(made) and "ttl" not in made
    return str(made["taskId"])


async def test_a_2026_engine_and_a_2026_server(http_sidecar: Any, write_config: Any, tmp_path: Path) -> None:
    events = tmp_path / "t26.jsonl"
    audit = tmp_path / "audit.jsonl"
    async with open_tasks_server(events) as url:
        config = write_config({T26: {"type": "http", "url": url, "pinning": "off"}}, audit={"file": str(audit)},
                              face={"listWaitSeconds": 30})
        async with http_sidecar(config, more_tokens=(OTHER,)) as sc, aiohttp.ClientSession(timeout=WAIT) as client:
            request = modern_requester(sc, client)
            discovered = (await request("server/discover", {}))["result"]["capabilities"]
            assert TASKS in discovered["extensions"]
            assert (await request("tools/call", {"name": f"{T26}__greet", "arguments": {"name": "x"}})
                    )["result"]["content"][0]["text"] == "Hello, x!"
            computed = _created(await request("tools/call", {"name": f"{T26}__slow_compute",
                                                              "arguments": {"label": "a"}}), T26)
            assert (await request("tasks/get", {"taskId": computed}))["result"]["status"] == "working"
            await request("tools/call", {"name": f"{T26}__release", "arguments": {"label": "a"}})
            done = await settled(request, computed)
            assert done["taskId"] == computed and done["result"]["content"][0]["text"] == "computed a"
            assert "io.modelcontextprotocol/related-task" not in done["result"].get("_meta", {})

            asking = _created(await request("tools/call", {"name": f"{T26}__ask_job", "arguments": {}}), T26)
            waiting = await settled(request, asking, frozenset({"input_required"}))
            assert waiting["inputRequests"]["who"]["method"] == "elicitation/create"
            assert (await request("tasks/update", {"taskId": asking, "inputResponses": ANSWER}))["result"] == {
                "resultType": "complete"}
            assert (await settled(request, asking))["result"]["content"][0]["text"] == "job for ada"

            cancelled = _created(await request("tools/call", {"name": f"{T26}__slow_compute",
                                                               "arguments": {"label": "never"}}), T26)
            assert (await request("tasks/cancel", {"taskId": cancelled}))["result"] == {"resultType": "complete"}
            assert (await settled(request, cancelled))["status"] == "cancelled"

            stranger = modern_requester(HttpSidecar(sc.base, OTHER, sc.process, sc.stderr_path, sc.port), client)
            upstream_id = computed.split("~", 1)[1]
            for forged in (computed, upstream_id, f"{T26}~nope"):
                asker = stranger if forged == computed else request
                assert "unknown task" in unknown(await asker("tasks/get", {"taskId": forged}))
            undeclared = modern_requester(sc, client, declare=False)
            refused = await undeclared("tasks/update", {"taskId": asking, "inputResponses": ANSWER})
            assert refused["error"]["code"] == -32021
            await request("tools/call", {"name": f"{T26}__release", "arguments": {"label": "b"}})
            plain = await undeclared("tools/call", {"name": f"{T26}__slow_compute", "arguments": {"label": "b"}})
            assert plain.get("result", {}).get("content", [{}])[0].get("text") == "computed b", plain  # run at once
    made = [e for e in read_event_file(events) if e["event"] == "task"]
    assert len(made) == 3  # the undeclared call ran at once
    assert all(not e["legacy_task"] for e in read_event_file(events) if e["event"] == "call")
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    read = [r for r in records if r.get("via") == "tasks/get"]
    assert {r["task"] for r in read} == {computed, asking} and all(r["tool"].startswith(f"{T26}__") for r in read)


async def test_a_2025_engine_and_a_2026_server(raw_sidecar: Any, write_config: Any, tmp_path: Path) -> None:
    events = tmp_path / "t26.jsonl"
    async with open_tasks_server(events) as url:
        config = write_config({T26: {"type": "http", "url": url, "pinning": "off"}}, face={"listWaitSeconds": 30})
        async with raw_sidecar(config) as sc:
            init = await sc.initialize(capabilities={"elicitation": {"form": {}}})
            assert init["capabilities"]["tasks"]["requests"] == {"tools": {"call": {}}}
            await sc.wait_for_tools([f"{T26}__slow_compute"])

            async def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
                answer: dict[str, Any] = await sc.request(method, params, timeout=30)
                return answer

            made = (await request("tools/call", {"name": f"{T26}__slow_compute", "arguments": {"label": "a"},
                                                 "task": {"ttl": 60_000}}))["result"]
            task = made["task"]
            assert task["taskId"].startswith(f"{T26}~") and task["status"] == "working" and "ttlMs" not in task
            got = (await request("tasks/get", {"taskId": task["taskId"]}))["result"]
            assert got["status"] == "working" and "result" not in got and got["pollInterval"] == 50
            listed = (await request("tasks/list", {}))["result"]["tasks"]
            assert [t["taskId"] for t in listed] == [task["taskId"]]
            waiting = await sc.send_request("tasks/result", {"taskId": task["taskId"]})
            await request("tools/call", {"name": f"{T26}__release", "arguments": {"label": "a"}})
            result = (await sc.response(waiting, timeout=30))["result"]
            assert result["content"][0]["text"] == "computed a"
            assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}

            job = (await request("tools/call", {"name": f"{T26}__ask_job", "arguments": {}, "task": {}}))["result"]
            waiting = await sc.send_request("tasks/result", {"taskId": job["task"]["taskId"]})
            asked = await sc.peer_request("elicitation/create", timeout=30)
            assert asked["params"]["message"] == "Who runs this job?"
            assert asked["params"]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": job["task"]["taskId"]}
            await sc.respond(asked["id"], {"action": "accept", "content": {"name": "grace"}})
            assert (await sc.response(waiting, timeout=30))["result"]["content"][0]["text"] == "job for grace"

            doomed = (await request("tools/call", {"name": f"{T26}__slow_compute", "arguments": {"label": "z"},
                                                   "task": {}}))["result"]["task"]["taskId"]
            cancelled = (await request("tasks/cancel", {"taskId": doomed}))["result"]
            assert cancelled["taskId"] == doomed and cancelled["status"] == "cancelled"
    answered = [e for e in read_event_file(events) if e["event"] == "update"]
    assert answered and answered[0]["answers"]["who"]["content"] == {"name": "grace"}


async def test_a_2026_engine_and_a_2025_server(http_sidecar: Any, npm: Any, write_config: Any) -> None:
    config = write_config({EV: npm.everything_entry()}, face={"listWaitSeconds": 30})
    async with http_sidecar(config, more_tokens=(OTHER,)) as sc, aiohttp.ClientSession(timeout=WAIT) as client:
        request = modern_requester(sc, client)
        assert TASKS in (await request("server/discover", {}))["result"]["capabilities"]["extensions"]
        made = _created(await request("tools/call", {"name": RESEARCH, "arguments": {"topic": "tide pools"}}), EV)
        done = await settled(request, made)
        assert done["status"] == "completed" and "Research Report: tide pools" in done["result"]["content"][0]["text"]
        assert "io.modelcontextprotocol/related-task" not in done["result"].get("_meta", {})
        other = _created(await request("tools/call", {"name": RESEARCH, "arguments": {"topic": "kelp"}}), EV)
        assert (await request("tasks/cancel", {"taskId": other}))["result"] == {"resultType": "complete"}
        assert (await settled(request, other))["status"] == "cancelled"
        refused = await request("tasks/update", {"taskId": made, "inputResponses": {}})
        assert "2025-11-25" in refused["error"]["message"]
        stranger = modern_requester(HttpSidecar(sc.base, OTHER, sc.process, sc.stderr_path, sc.port), client)
        assert "unknown task" in unknown(await stranger("tasks/get", {"taskId": made}))


async def test_a_2026_engine_and_a_2025_streamable_http_server(http_sidecar: Any, npm: Any, write_config: Any) -> None:
    async with everything_over_http(npm) as url:
        config = write_config({EV: {"type": "http", "url": url, "startTimeoutSeconds": 20}},
                              face={"listWaitSeconds": 30, "bareNames": False})
        async with http_sidecar(config) as sc, aiohttp.ClientSession(timeout=WAIT) as client:
            request = modern_requester(sc, client)
            made = _created(await request("tools/call", {"name": RESEARCH, "arguments": {"topic": "reefs"}}), EV)
            done = await settled(request, made)
            assert done["status"] == "completed" and "Research Report: reefs" in done["result"]["content"][0]["text"]


async def test_a_2026_engine_hears_its_tasks_status_on_its_listen_stream(http_sidecar: Any, npm: Any,
                                                                       write_config: Any) -> None:
    """server-everything's status notifications reach the caller's `subscriptions/listen`
    stream as the extension's `notifications/tasks`, for the tasks it asked for and owns."""
    config = write_config({EV: npm.everything_entry()}, face={"listWaitSeconds": 30})
    async with http_sidecar(config, more_tokens=(OTHER,)) as sc, aiohttp.ClientSession(timeout=WAIT) as client:
        request = modern_requester(sc, client)
        made = _created(await request("tools/call", {"name": RESEARCH, "arguments": {"topic": "lagoons"}}), EV)
        stranger = HttpSidecar(sc.base, OTHER, sc.process, sc.stderr_path, sc.port)
        assert await _listen(stranger, client, [made]) == []  # another caller's task is not honoured
        heard = await _listen(sc, client, [made, f"{EV}~forged"], until="completed")
    ack, statuses = heard[0], heard[1:]
    assert ack["params"]["notifications"] == {"taskIds": [made]}
    assert statuses and all(s["method"] == "notifications/tasks" and s["params"]["taskId"] == made for s in statuses)
    assert statuses[-1]["params"]["status"] == "completed" and "ttlMs" in statuses[-1]["params"]


async def _listen(sc: HttpSidecar, client: aiohttp.ClientSession, task_ids: list[str],
                  until: str | None = None) -> list[dict[str, Any]]:
    """A listen stream asking for `task_ids`: its frames until a status `until` (None: the
    acknowledgement alone, then [] when it honoured none)."""
    body = {"jsonrpc": "2.0", "id": "sub-1", "method": "subscriptions/listen", "params": {
        "notifications": {"taskIds": task_ids}, "_meta": {**ENVELOPE, **DECLARED}}}
    headers = sc.headers(**{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"})
    frames: list[dict[str, Any]] = []
    async with client.post(sc.url, json=body, headers=headers) as response:
        with anyio.fail_after(30):
            async for line in response.content:
                if not line.startswith(b"data: "):
                    continue
                frames.append(json.loads(line[6:]))
                if until is None:
                    return frames if frames[0]["params"]["notifications"] else []
                if frames[-1]["method"] == "notifications/tasks" and frames[-1]["params"]["status"] == until:
                    return frames
    return frames
