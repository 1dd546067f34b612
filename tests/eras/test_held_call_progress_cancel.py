"""Progress and cancellation of a held call (issue 24): a session-era upstream's progress
reaches a 2026-07-28 engine on the event stream of whichever round is open, under that
round's token; an engine that hangs up on a round cancels the call upstream."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest

from tests.conftest import await_event, read_event_file
from tests.eras.eras_support import MODERN, Person, era_entry, said, sdk_client, sdk_wait_for_tools, \
    stateless_call, wait_for_tools
from tests.http.http_support import open_http_sidecar

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_progress_reaches_the_engine_before_and_after_the_question(write_config, tmp_path: Path,
                                                                         mode: str) -> None:
    config = write_config({"era": era_entry()})
    person = Person("pat")
    seen: list[tuple[float, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, message))

    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc:
        async with sdk_client(sc.url, sc.token, person, mode) as client:
            await sdk_wait_for_tools(client)
            with anyio.fail_after(60):
                result = await client.call_tool("era__progress_ask", {}, progress_callback=progress)
    assert said(result) == "progress_ask: pat"
    assert seen == [(1, "before the question"), (2, "after the question")]


async def test_an_engine_that_hangs_up_on_a_round_cancels_the_call_upstream(write_config, tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    config = write_config({"era": era_entry(events)})
    answer: dict[str, Any] = {"upstream": {"action": "accept", "content": {"name": "max"}}}
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc, aiohttp.ClientSession() as http:
        await wait_for_tools(http, sc.url, sc.token)
        _, asked = await stateless_call(http, sc.url, sc.token, "era__ask_then_hang", {})
        state = asked["result"]["requestState"]
        with anyio.move_on_after(1):  # the engine gives up on its second round and closes the request
            await stateless_call(http, sc.url, sc.token, "era__ask_then_hang", {}, state=state, responses=answer)
        await await_event(events, lambda e: e["event"] == "answered", timeout=10)
        await await_event(events, lambda e: e["event"] == "cancelled" and e["tool"] == "ask_then_hang", timeout=10)


async def test_a_session_engine_that_gives_up_after_answering_cancels_the_call_upstream(write_config,
                                                                                         tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    config = write_config({"era": era_entry(events)})
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc:
        async with sdk_client(sc.url, sc.token, Person("max"), "legacy") as client:
            await sdk_wait_for_tools(client)
            with anyio.move_on_after(2):
                await client.call_tool("era__ask_then_hang", {})
            await await_event(events, lambda e: e["event"] == "cancelled" and e["tool"] == "ask_then_hang", timeout=10)
    assert [e["what"] for e in read_event_file(events) if e["event"] == "answered"] == ["form"]
