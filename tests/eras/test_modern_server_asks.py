"""Item 2 of issue 24: a 2026-07-28-only server (the mcp SDK's low-level server, its
`initialize` refused) answers a call with input-required results; the sidecar puts each
question to the engine of the call (a request on a session-era engine's session, on
stdio or HTTP; for a stateless engine, the server's own round relayed, as
test_relayed_rounds shows), sends the
call again with the answers and the server's state, for as many rounds as the server
needs, within a bound; an engine that did not declare what a question needs gets a
clear error naming the capability."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest

from sidecar.gate.asked import MAX_INPUT_ROUNDS
from tests.conftest import read_event_file
from tests.eras.eras_support import MODERN, Person, open_modern_server, said, sdk_client, sdk_wait_for_tools, \
    stateless_call, wait_for_tools
from tests.http.http_support import open_http_sidecar

pytestmark = pytest.mark.e2e

TOOLS = ("form", "url", "sample", "roots", "chain")


def _config(write_config, url: str, **top: Any) -> Path:
    path: Path = write_config({"modern": {"type": "http", "url": url, "pinning": "off"}}, **top)
    return path


def _check(results: dict[str, str]) -> None:
    assert json.loads(results["form"].split(": ", 1)[1]) == {"action": "accept", "content": {"name": "ivy"}}
    assert json.loads(results["url"].split(": ", 1)[1]) == {"action": "accept"}
    assert json.loads(results["sample"].split(": ", 1)[1])["content"]["text"] == "hi<ping>"
    assert json.loads(results["roots"].split(": ", 1)[1])["roots"][0]["uri"] == "file:///work/project"
    assert results["chain"] == "chain: hi<greet>"


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_every_question_kind_over_http_on_both_engine_revisions(write_config, tmp_path: Path,
                                                                      mode: str) -> None:
    events = tmp_path / "modern.jsonl"
    person = Person("ivy")
    async with open_modern_server(events) as url, open_http_sidecar(_config(write_config, url), tmp_path,
                                                                     log_level="INFO") as sc:
        async with sdk_client(sc.url, sc.token, person, mode) as client:
            await sdk_wait_for_tools(client, "modern__echo")
            with anyio.fail_after(60):
                results = {t: said(await client.call_tool(f"modern__{t}", {})) for t in TOOLS}
    _check(results)
    assert [kind for kind, _ in person.asked] == ["elicit", "elicit", "sample", "roots", "elicit", "sample"]
    if mode == "legacy":  # a session-era engine needs an id on a URL elicitation; the sidecar gave one
        assert person.asked[1][1].elicitation_id
    states = [e["state"] for e in read_event_file(events) if e["tool"] == "chain"]
    assert states == [None, "1", "2"]  # the server's own state came back to it, round by round


async def test_every_question_kind_on_stdio(write_config, sidecar_client, tmp_path: Path) -> None:
    person = Person("ivy")
    async with open_modern_server() as url:
        async with sidecar_client(_config(write_config, url), elicitation=person.elicit, sampling=person.sample,
                                  roots=person.roots) as c:
            await c.wait_for_tools({"modern__echo"})
            with anyio.fail_after(60):
                results = {t: said(await c.session.call_tool(f"modern__{t}", {})) for t in TOOLS}
    _check(results)


async def test_a_missing_capability_is_named(write_config, sidecar_client, tmp_path: Path) -> None:
    person = Person("ivy")
    async with open_modern_server() as url:
        async with sidecar_client(_config(write_config, url), elicitation=person.elicit) as c:
            await c.wait_for_tools({"modern__echo"})
            with anyio.fail_after(60):
                sampled = await c.session.call_tool("modern__sample", {})
        assert sampled.is_error and "did not declare the sampling capability" in said(sampled)
        async with open_http_sidecar(_config(write_config, url), tmp_path, log_level="INFO") as sc, \
                aiohttp.ClientSession() as http:
            await wait_for_tools(http, sc.url, sc.token, "modern__echo")
            status, message = await stateless_call(http, sc.url, sc.token, "modern__url", {},
                                                   capabilities={"elicitation": {"form": {}}})
    assert status == 200 and message["result"]["isError"]
    assert "URL mode" in message["result"]["content"][0]["text"]
    assert person.asked == []


async def test_a_server_that_asks_forever_is_stopped_after_the_bound(write_config, sidecar_client,
                                                                     tmp_path: Path) -> None:
    events = tmp_path / "modern.jsonl"
    person = Person("ivy")
    async with open_modern_server(events) as url:
        async with sidecar_client(_config(write_config, url), elicitation=person.elicit) as c:
            await c.wait_for_tools({"modern__echo"})
            with anyio.fail_after(60):
                result = await c.session.call_tool("modern__forever", {})
    assert result.is_error and f"more than {MAX_INPUT_ROUNDS} times" in said(result)
    assert len(person.asked) == MAX_INPUT_ROUNDS
    assert sum(e["tool"] == "forever" for e in read_event_file(events)) == MAX_INPUT_ROUNDS + 1


async def test_an_engine_that_never_answers_ends_the_call_clearly(write_config, sidecar_client,
                                                                  tmp_path: Path) -> None:
    person = Person(stall=True)
    async with open_modern_server() as url:
        config = _config(write_config, url, policy={"confirmSeconds": 1})
        async with sidecar_client(config, elicitation=person.elicit) as c:
            await c.wait_for_tools({"modern__echo"})
            with anyio.fail_after(30):
                result = await c.session.call_tool("modern__form", {})
                after = await c.session.call_tool("modern__echo", {"nonce": "still-here"})
    assert result.is_error and "did not answer within 1 s" in said(result)
    assert said(after) == "still-here"


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_progress_comes_through_every_round_and_a_cancel_reaches_the_server(write_config, tmp_path: Path,
                                                                                   mode: str) -> None:
    from tests.conftest import await_event

    events = tmp_path / "modern.jsonl"
    person = Person("ivy")
    seen: list[float] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append(done)

    async with open_modern_server(events) as url, open_http_sidecar(_config(write_config, url), tmp_path,
                                                                     log_level="INFO") as sc:
        async with sdk_client(sc.url, sc.token, person, mode) as client:
            await sdk_wait_for_tools(client, "modern__echo")
            with anyio.fail_after(60):
                result = await client.call_tool("modern__progress_ask", {}, progress_callback=progress)
            with anyio.move_on_after(1):  # the engine gives up on a call that never ends
                await client.call_tool("modern__hang", {})
            await await_event(events, lambda e: e["event"] == "cancelled" and e["tool"] == "hang", timeout=10)
            with anyio.fail_after(30):
                after = await client.call_tool("modern__echo", {})
    assert said(result) == "progress_ask: ivy" and seen == [1, 2]
    assert after.is_error is False


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_a_prompt_that_asks_first(write_config, tmp_path: Path, mode: str) -> None:
    person = Person("ivy")
    async with open_modern_server() as url, open_http_sidecar(_config(write_config, url), tmp_path,
                                                               log_level="INFO") as sc:
        async with sdk_client(sc.url, sc.token, person, mode) as client:
            await sdk_wait_for_tools(client, "modern__echo")
            with anyio.fail_after(60):
                prompt = await client.get_prompt("modern__ask_prompt")
    assert prompt.messages[0].content.text == "a prompt for ivy"
    assert [kind for kind, _ in person.asked] == ["elicit"]
