"""A session-era engine on stdio (the mcp SDK's ClientSession through the sidecar's stdio
front) against both server eras: every question kind, progress through a question, and
cancellation after answering one (issue 24's matrix, stdio rows)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from tests.conftest import await_event
from tests.eras.eras_support import Person, era_entry, open_modern_server, said

pytestmark = pytest.mark.e2e


async def test_a_session_era_server_asks_a_stdio_engine_everything(write_config, sidecar_client,
                                                                   tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    person = Person("sol")
    seen: list[float] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append(done)

    config = write_config({"era": era_entry(events)})
    async with sidecar_client(config, elicitation=person.elicit, sampling=person.sample, roots=person.roots) as c:
        await c.wait_for_tools({"era__form"})
        with anyio.fail_after(60):
            url = said(await c.session.call_tool("era__url", {}))
            sampled = said(await c.session.call_tool("era__sample", {"prompt": "p"}))
            roots = json.loads(said(await c.session.call_tool("era__roots", {})))
            halfway = said(await c.session.call_tool("era__progress_ask", {}, progress_callback=progress))
        with anyio.move_on_after(2):
            await c.session.call_tool("era__ask_then_hang", {})
        await await_event(events, lambda e: e["event"] == "cancelled" and e["tool"] == "ask_then_hang", timeout=10)
    assert (url, sampled, roots, halfway) == ("url:accept", "sampled: hi<p>", ["file:///work/project"],
                                              "progress_ask: sol")
    assert seen == [1, 2]


async def test_a_2026_07_28_server_gets_progress_and_cancel_through_a_stdio_engine(write_config, sidecar_client,
                                                                                    tmp_path: Path) -> None:
    events = tmp_path / "modern.jsonl"
    person = Person("sol")
    seen: list[float] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append(done)

    async with open_modern_server(events) as url:
        config = write_config({"modern": {"type": "http", "url": url, "pinning": "off"}})
        async with sidecar_client(config, elicitation=person.elicit) as c:
            await c.wait_for_tools({"modern__echo"})
            with anyio.fail_after(60):
                result = said(await c.session.call_tool("modern__progress_ask", {}, progress_callback=progress))
            with anyio.move_on_after(1):
                await c.session.call_tool("modern__hang", {})
            await await_event(events, lambda e: e["event"] == "cancelled" and e["tool"] == "hang", timeout=10)
    assert result == "progress_ask: sol" and seen == [1, 2]
