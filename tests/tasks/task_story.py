"""The task story every task test tells, on any front: `check_tasks(request)` with
`request(method, params)` -> the answer frame, against npm `server-everything` under the
alias `everything` (its `simulate-research-query` runs only as a task)."""

from __future__ import annotations

from typing import Any

EV = "everything"
RESEARCH = f"{EV}__simulate-research-query"
TASK_CAPABILITY = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}


async def start_task(request: Any, topic: str) -> str:
    made = await request("tools/call", {"name": RESEARCH, "arguments": {"topic": topic}, "task": {"ttl": 60_000}})
    task = made["result"]["task"]
    assert task["taskId"].startswith(f"{EV}~") and task["status"] == "working", made
    return str(task["taskId"])


def unknown(answer: dict[str, Any]) -> str:
    assert answer["error"]["code"] == -32602, answer
    return str(answer["error"]["message"])


async def check_tasks(request: Any) -> str:
    """The whole story on one session; returns the id of the finished task."""
    done_id = await start_task(request, "tide pools")
    got = (await request("tasks/get", {"taskId": done_id}))["result"]
    assert got["taskId"] == done_id and got["status"] in ("working", "completed")
    listed = (await request("tasks/list", {}))["result"]["tasks"]
    assert [t["taskId"] for t in listed] == [done_id]
    upstream_id = done_id.split("~", 1)[1]
    for forged in (upstream_id, f"{EV}~not-a-task", f"sdk~{upstream_id}", 7):
        assert "unknown task" in unknown(await request("tasks/get", {"taskId": forged}))
    result = (await request("tasks/result", {"taskId": done_id}))["result"]
    assert "Research Report: tide pools" in result["content"][0]["text"]
    assert len(result["content"][0]["text"]) > 1000  # under the default budget, whole
    related = result.get("_meta", {}).get("io.modelcontextprotocol/related-task")
    assert related is None or related["taskId"] == done_id  # never the upstream's own id
    assert (await request("tasks/get", {"taskId": done_id}))["result"]["status"] == "completed"
    cancel_id = await start_task(request, "kelp")
    cancelled = (await request("tasks/cancel", {"taskId": cancel_id}))["result"]
    assert cancelled["taskId"] == cancel_id and cancelled["status"] == "cancelled"
    return done_id
