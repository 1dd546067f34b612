"""A 2026-07-28 engine on the stateless HTTP front using the task methods against npm
`server-everything` (stdio, session era): the task is made by a call that passed the gate,
and polled, listed, read and cancelled under the sidecar's ids by the same caller (the
bearer token's identity); another caller gets "unknown task". The 2026 tasks extension's
own shapes are in tests/tasks/test_tasks_2026.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.apps.session_peer import stateless
from tests.http.http_support import HttpSidecar, http_sidecar  # noqa: F401 - fixture
from tests.tasks.task_story import EV, check_tasks

pytestmark = pytest.mark.timeout(120)


async def test_tasks_from_a_stateless_engine_stay_with_their_caller(
        http_sidecar: Any, npm: Any, write_config: Any, tmp_path: Path) -> None:
    config = write_config({EV: npm.everything_entry()}, face={"listWaitSeconds": 30})
    async with http_sidecar(config, more_tokens=("other-token-0123456789abcdef",)) as sc, \
            aiohttp.ClientSession() as client:
        async def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
            answer: dict[str, Any] = await stateless(sc, client, method, params)
            return answer

        await request("tools/list", {})
        done_id = await check_tasks(request)
        other = HttpSidecar(sc.base, "other-token-0123456789abcdef", sc.process, sc.stderr_path, sc.port)
        for method in ("tasks/get", "tasks/result"):
            answer = await stateless(other, client, method, {"taskId": done_id})
            assert "unknown task" in json.dumps(answer), answer
