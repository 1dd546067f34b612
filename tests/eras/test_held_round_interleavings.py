"""The interleavings of a held call's rounds (issue 24) that a loaded machine produces only
now and then, forced here: the in-memory harness's upstream, the real HTTP front on
127.0.0.1 in this process, and a raw 2026-07-28 engine.

The one that lost a round: an upstream's progress and its question read together, so the
round's progress frame and its input-required answer are both queued before the round's
handler first looks. The handler must then stream both; answering with the first frame
alone as JSON (a progress notice) left the engine waiting for ever."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
from aiohttp.test_utils import TestServer

from sidecar.front.http.listener import FrontSettings
from sidecar.front.http.routes import HttpFront
from sidecar.redact import Redactor
from tests.eras.eras_support import modern_headers
from tests.harness import FakeServer, in_memory, tool
from tests.harness.upstream import WAIT, ScriptedCall

TOKEN = "interleavings-token-0123456789abcdef"
NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}


@asynccontextmanager
async def http_front_over(server: FakeServer) -> AsyncIterator[str]:
    """The HTTP front over an in-memory sidecar whose one upstream is `server`: its /mcp URL."""
    async with in_memory({"era": server}) as sidecar:
        await sidecar.settled()
        settings = FrontSettings(host="127.0.0.1", port=0, token=TOKEN)
        front = HttpFront(sidecar.face, Redactor(sidecar.whole.secrets()), settings)
        site = TestServer(front.app(), host="127.0.0.1", port=0)
        await site.start_server()
        try:
            yield str(site.make_url("/mcp"))
        finally:
            front.held.stop_all("the test is over")
            await front.held.aclose()
            await site.close()


async def one_round(http: aiohttp.ClientSession, url: str, token: int, ident: int,
                    **more: Any) -> list[dict[str, Any]]:
    """One raw round of `era__progress_ask` under progress `token`: every message its
    answer carried, in order (one for JSON, each event's for a stream)."""
    params = {"name": "era__progress_ask", "arguments": {}, "_meta": {**ENVELOPE, "progressToken": token}, **more}
    body = {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}
    async with asyncio.timeout(WAIT):
        async with http.post(url, json=body, headers=modern_headers(TOKEN, "era__progress_ask")) as response:
            text = await response.text()
            if response.content_type == "application/json":
                return [json.loads(text)]
    return [json.loads(line[len("data: "):]) for line in text.splitlines() if line.startswith("data: ")]


async def progress_ask(call: ScriptedCall) -> None:
    """The upstream's side. Each step's frames are sent in one loop turn, so the sidecar
    reads them back to back, as it does when they come in one read from a pipe."""
    call.progress(1, 2, "before the question")
    asked = await call.ask("elicitation/create", {"message": "Halfway: your name?", "requestedSchema": NAME_FORM})
    name = asked["result"]["content"]["name"]
    call.progress(2, 2, "after the question")
    call.answer(f"progress_ask: {name}")


def progress_of(messages: list[dict[str, Any]]) -> list[tuple[Any, Any, Any]]:
    return [(m["params"]["progressToken"], m["params"]["progress"], m["params"].get("message"))
            for m in messages if m.get("method") == "notifications/progress"]


async def test_progress_read_with_the_question_still_reaches_the_engine_with_the_round_s_answer() -> None:
    upstream = FakeServer([tool("progress_ask")])
    async with http_front_over(upstream) as url, aiohttp.ClientSession() as http:
        first_round = asyncio.ensure_future(one_round(http, url, token=11, ident=1))
        call = await upstream.expect_call("progress_ask")
        upstream_side = asyncio.ensure_future(progress_ask(call))
        first = await first_round
        assert progress_of(first) == [(11, 1, "before the question")]
        assert "result" in first[-1], f"the round's input-required answer was lost: {first}"
        asked = first[-1]["result"]
        assert asked["resultType"] == "input_required"
        assert asked["inputRequests"]["upstream"]["method"] == "elicitation/create"

        answer = {"upstream": {"action": "accept", "content": {"name": "pat"}}}
        second = await one_round(http, url, token=12, ident=2, requestState=asked["requestState"],
                                 inputResponses=answer)
        async with asyncio.timeout(WAIT):
            await upstream_side
    assert progress_of(second) == [(12, 2, "after the question")]
    assert second[-1]["id"] == 2
    assert second[-1]["result"]["content"] == [{"type": "text", "text": "progress_ask: pat"}]
