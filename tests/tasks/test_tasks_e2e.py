"""Tasks (MCP 2025-11-25) through the real fronts, against npm `server-everything`, whose
`simulate-research-query` runs only as a task (`taskSupport: "required"`, four stages of
about a second). The capability is offered because that upstream offers it; the task id
the engine gets is namespaced and maps back on get, list, result and cancel; a status
notification reaches the engine under that id; another session (or a forged id) gets one
"unknown task" answer; `tasks/result` goes through the result budget; a denied tool makes
no task. Over stdio and over the HTTP session front."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.apps.session_peer import SessionPeer
from tests.tasks.task_story import EV, RESEARCH, TASK_CAPABILITY, check_tasks, start_task, unknown
from tests.http.http_support import http_sidecar  # noqa: F401 - fixture

pytestmark = pytest.mark.timeout(120)



@pytest.fixture
def tasks_config(npm: Any, write_config: Any, sdk_server_entry: Any) -> Path:
    path: Path = write_config({EV: npm.everything_entry(), "sdk": sdk_server_entry("sdk")},
                              face={"listWaitSeconds": 30})
    return path


async def test_tasks_over_stdio(raw_sidecar: Any, tasks_config: Path) -> None:
    async with raw_sidecar(tasks_config) as sc:
        init = await sc.initialize()
        assert init["capabilities"]["tasks"] == TASK_CAPABILITY
        await sc.wait_for_tools([RESEARCH, "sdk__echo"])

        async def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
            answer: dict[str, Any] = await sc.request(method, params, timeout=30)
            return answer

        await check_tasks(request)
        statuses = sc.notifications("notifications/tasks/status")
        assert all(n["params"]["taskId"].startswith(f"{EV}~") for n in statuses)


async def test_tasks_over_the_http_session_front_stay_with_their_session(
        http_sidecar: Any, tasks_config: Path) -> None:
    async with http_sidecar(tasks_config) as sc, aiohttp.ClientSession() as client:
        owner, other = SessionPeer(sc, client), SessionPeer(sc, client)
        assert (await owner.initialize())["result"]["capabilities"]["tasks"] == TASK_CAPABILITY
        await other.initialize()
        done_id = await check_tasks(owner.request)
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            assert "unknown task" in unknown(await other.request(method, {"taskId": done_id}))
        assert (await other.request("tasks/list", {}))["result"]["tasks"] == []


async def test_a_task_result_goes_through_the_result_budget(raw_sidecar: Any, tasks_config: Path) -> None:
    async with raw_sidecar(tasks_config, env={"OMB_MCP_RESULT_BUDGET": "300"}) as sc:
        await sc.initialize()
        await sc.wait_for_tools([RESEARCH])
        task_id = await start_task(lambda m, p: sc.request(m, p, timeout=30), "sea otters")
        result = (await sc.request("tasks/result", {"taskId": task_id}, timeout=30))["result"]
        text = "".join(c.get("text", "") for c in result["content"])
        assert "Research Report: sea otters" in text and len(text) < 700  # the whole report is over 1,000


async def test_a_denied_tool_makes_no_task(raw_sidecar: Any, npm: Any, write_config: Any) -> None:
    config = write_config({EV: npm.everything_entry()}, grants={"deny": [RESEARCH]})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools([f"{EV}__echo"])
        made = await sc.request("tools/call", {"name": RESEARCH, "arguments": {"topic": "x"}, "task": {}}, timeout=30)
        assert "unknown tool" in made["error"]["message"]
        assert (await sc.request("tasks/list", {}))["result"]["tasks"] == []


async def test_a_tasks_question_reaches_the_engine_under_its_task_id(raw_sidecar: Any, tasks_config: Path) -> None:
    """server-everything's ambiguous research asks for a clarification while the engine
    waits on `tasks/result`: the question names the engine's task id, and the answer
    reaches the task."""
    async with raw_sidecar(tasks_config) as sc:
        await sc.initialize(capabilities={"elicitation": {"form": {}}})
        await sc.wait_for_tools([RESEARCH])
        made = await sc.request("tools/call", {"name": RESEARCH, "arguments": {"topic": "python", "ambiguous": True},
                                               "task": {"ttl": 60_000}}, timeout=30)
        task_id = made["result"]["task"]["taskId"]
        waiting = await sc.send_request("tasks/result", {"taskId": task_id})
        asked = await sc.peer_request("elicitation/create", timeout=30)
        related = asked["params"].get("_meta", {}).get("io.modelcontextprotocol/related-task")
        assert related == {"taskId": task_id}
        await sc.respond(asked["id"], {"action": "accept", "content": {"interpretation": "the snake"}})
        result = (await sc.response(waiting, timeout=30))["result"]
        assert "the snake" in result["content"][0]["text"]
