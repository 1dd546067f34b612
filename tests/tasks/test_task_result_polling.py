"""A 2025 engine's `tasks/result` on a 2026 server's task, in memory (tests/harness): the
sidecar polls the server's `tasks/get` at the pace it asks; when the engine cancels its
`tasks/result`, the polling ends (the handler finishes, the server is asked no more) and
the engine gets no answer to the cancelled request."""

from __future__ import annotations

from typing import Any

from tests.conftest import wait_until
from tests.harness import FakeServer, ScriptedCall, in_memory, tool

TASKS: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
TASK = {"taskId": "u-1", "status": "working", "createdAt": "2026-01-01T00:00:00Z",
        "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttlMs": 60_000, "pollIntervalMs": 20}


def _create(call: ScriptedCall) -> None:
    call.answer(result={**TASK, "resultType": "task"})


async def test_cancelling_a_tasks_result_ends_the_polling() -> None:
    server = FakeServer([tool("work")], on_call=_create, capabilities=TASKS,
                        answers={"tasks/get": lambda params: {**TASK, "resultType": "complete"}})
    async with in_memory({"f": server}, entries={"f": {"pinning": "off"}}) as sidecar:
        engine = await sidecar.engine()
        made = await engine.answer_to(engine.request("tools/call", {"name": "f__work", "arguments": {}, "task": {}}))
        task_id = made["result"]["task"]["taskId"]
        assert task_id == "f~u-1" and made["result"]["task"]["pollInterval"] == 20
        asked = engine.request("tasks/result", {"taskId": task_id})
        await wait_until(lambda: len(server.frames("tasks/get")) >= 3, timeout=5, what="the task polled")
        engine.cancel(asked, "no longer needed")
        await wait_until(lambda: len(engine.jobs) == 0, timeout=5, what="the tasks/result handler to end")
        polled = len(server.frames("tasks/get"))
        await engine.roundtrip("ping")  # the loop turns on; nothing polls any more
        assert len(server.frames("tasks/get")) == polled and engine.answers_to(asked) == []
