"""A 2026-07-28 engine on the stateless HTTP front and the task methods, against npm
`server-everything` (stdio, session era): at 2026-07-28 the task methods are the tasks
extension's alone, so a request that does not declare the extension is refused with
-32021 (the extension's "missing required client capability"), and `tasks/result` and
`tasks/list`, which the extension removed, are refused to one that does. The extension's
own shapes, the ids per caller and the other cells are in tests/tasks/test_tasks_2026.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.http.http_support import http_sidecar  # noqa: F401 - fixture
from tests.tasks.modern_tasks import TASKS, modern_requester, settled
from tests.tasks.task_story import EV, RESEARCH

pytestmark = pytest.mark.timeout(120)


async def test_task_methods_at_2026_07_28_are_the_extensions(http_sidecar: Any, npm: Any, write_config: Any,
                                                             tmp_path: Path) -> None:
    config = write_config({EV: npm.everything_entry()}, face={"listWaitSeconds": 30})
    async with http_sidecar(config) as sc, aiohttp.ClientSession() as client:
        declared, undeclared = modern_requester(sc, client), modern_requester(sc, client, declare=False)
        discovered = (await declared("server/discover", {}))["result"]["capabilities"]
        assert TASKS in discovered["extensions"] and "tasks" not in discovered  # no 2025-11-25 slot at 2026
        made = (await declared("tools/call", {"name": RESEARCH, "arguments": {"topic": "dunes"}}))["result"]
        task_id = made["taskId"]
        for method in ("tasks/get", "tasks/cancel", "tasks/result", "tasks/list", "tasks/update"):
            params = {"taskId": task_id, **({"inputResponses": {}} if method == "tasks/update" else {})}
            refused = await undeclared(method, params)
            assert refused["error"]["code"] == -32021 and TASKS in refused["error"]["message"], refused
            assert refused["error"]["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}, refused
        for method in ("tasks/result", "tasks/list"):
            assert (await declared(method, {"taskId": task_id}))["error"]["code"] == -32601
        assert (await settled(declared, task_id))["status"] == "completed"
