"""`tasks/result` is recorded like the call that made the task (issue 24): one audit line
with the same fields, `via` "tasks/result", the tool that really ran, and the task's id as
the engine holds it; a refused `tasks/result` (another id) writes nothing. Against npm
`server-everything`, whose research tool runs only as a task, through the stdio front."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.tasks.task_story import EV, RESEARCH, start_task, unknown

pytestmark = pytest.mark.timeout(120)


async def test_a_task_result_writes_an_audit_line_like_its_call(raw_sidecar: Any, npm: Any, write_config: Any,
                                                               tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    config = write_config({EV: npm.everything_entry()}, audit={"file": str(audit)}, face={"listWaitSeconds": 30})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools([RESEARCH])
        task_id = await start_task(lambda m, p: sc.request(m, p, timeout=30), "kelp forests")
        result = (await sc.request("tasks/result", {"taskId": task_id}, timeout=30))["result"]
        assert "Research Report: kelp forests" in result["content"][0]["text"]
        assert "unknown task" in unknown(await sc.request("tasks/result", {"taskId": f"{EV}~forged"}, timeout=30))
    made, fetched = [json.loads(line) for line in audit.read_text().splitlines()]
    assert set(fetched) == set(made) | {"task"}
    assert (made["tool"], made["upstream"], made["outcome"]) == (fetched["tool"], fetched["upstream"], "completed")
    assert fetched["via"] == "tasks/result" and fetched["task"] == task_id and "task" not in made
    assert fetched["bytesIn"] > 1000 and fetched["charge"] == "pass"
