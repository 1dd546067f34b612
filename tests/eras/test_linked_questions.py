"""Which call a stdio server's question belongs to (issue 24): stdio links no server
request to its call, so a session-era server may name the call in the question's `_meta`,
by the call's progress token or by the id the sidecar sent the call under
(`io.modelcontextprotocol/related-request`). Two stateless engines call the same stdio
server at once; the first call's question is asked only after the second's, the order in
which the rule without a link (the first call not already waiting on that server) gets it
wrong. Each engine gets its own call's question, and its answer reaches its own call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest

from tests.conftest import await_event
from tests.eras.eras_support import era_entry, stateless_call, wait_for_tools
from tests.http.http_support import open_http_sidecar

pytestmark = pytest.mark.e2e


def _question(message: dict[str, Any]) -> tuple[str, str]:
    result = message["result"]
    assert result["resultType"] == "input_required", message
    return result["inputRequests"]["upstream"]["params"]["message"], result["requestState"]


@pytest.mark.parametrize("link", ["token", "request"])
async def test_two_calls_asking_at_once_each_get_their_own_question(link: str, write_config: Any,
                                                                    tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    config = write_config({"era": era_entry(events)})
    first = {"message": "for first", "link": link, "after": "for second"}
    second = {"message": "for second", "link": link}
    got: dict[str, Any] = {}
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc, aiohttp.ClientSession() as http:
        await wait_for_tools(http, sc.url, sc.token, "era__linked_ask")

        async def call(key: str, arguments: dict[str, Any], ident: int) -> None:
            meta_token = {"progressToken": f"engine-{key}"}  # so the sidecar sends the call with a token of its own
            got[key] = await _call(http, sc, arguments, ident, meta_token)

        async with anyio.create_task_group() as group:
            group.start_soon(call, "first", first, 1)
            await await_event(events, lambda e: e["event"] == "call", timeout=10)  # the first call is upstream
            group.start_soon(call, "second", second, 2)
        asked_first, state_first = _question(got["first"])
        asked_second, state_second = _question(got["second"])
        assert (asked_first, asked_second) == ("for first", "for second")
        done_second = await _call(http, sc, second, 2, state=state_second, name="bo")
        done_first = await _call(http, sc, first, 1, state=state_first, name="al")
    assert done_first["result"]["content"][0]["text"] == "for first: al"
    assert done_second["result"]["content"][0]["text"] == "for second: bo"


async def _call(http: aiohttp.ClientSession, sc: Any, arguments: dict[str, Any], ident: int,
                meta: dict[str, Any] | None = None, *, state: str | None = None, name: str = "") -> dict[str, Any]:
    responses = {"upstream": {"action": "accept", "content": {"name": name}}} if state is not None else None
    status, message = await stateless_call(http, sc.url, sc.token, "era__linked_ask", arguments, state=state,
                                           responses=responses, ident=ident, meta=meta)
    assert status == 200, message
    return message
