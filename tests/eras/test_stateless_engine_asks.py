"""Item 1 of issue 24: a session-era upstream (the mcp SDK's low-level server on stdio,
2025-11-25 handshake) asks mid-call, and a 2026-07-28 engine (the mcp SDK's client, pinned
to the stateless revision) gets the question as an input-required result with a sealed
state; its next round answers the upstream and gets the result, or the next question."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from tests.conftest import read_event_file
from tests.eras.eras_support import MODERN, Person, era_entry, said, sdk_client, sdk_wait_for_tools
from tests.http.http_support import open_http_sidecar

pytestmark = pytest.mark.e2e


async def test_form_url_sampling_and_roots_reach_a_stateless_engine(write_config, tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    config = write_config({"era": era_entry(events)})
    person = Person("ada")
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc:
        async with sdk_client(sc.url, sc.token, person, MODERN) as client:
            with anyio.fail_after(60):
                await sdk_wait_for_tools(client)
                form = await client.call_tool("era__form", {"message": "Your name?"})
                url = await client.call_tool("era__url", {})
                sampled = await client.call_tool("era__sample", {"prompt": "ping"})
                roots = await client.call_tool("era__roots", {})
    assert json.loads(said(form)) == {"action": "accept", "content": {"name": "ada"}}
    assert said(url) == "url:accept"
    assert said(sampled) == "sampled: hi<ping>"
    assert json.loads(said(roots)) == ["file:///work/project"]
    kinds = [kind for kind, _ in person.asked]
    assert kinds == ["elicit", "elicit", "sample", "roots"]
    assert person.asked[0][1].message == "Your name?"
    assert person.asked[1][1].mode == "url" and str(person.asked[1][1].url).startswith("https://example.com/signin")
    answered = [e["what"] for e in read_event_file(events) if e["event"] == "answered"]
    assert answered == ["form", "url", "sample", "roots"]


async def test_two_questions_in_one_call_take_two_rounds(write_config, tmp_path: Path) -> None:
    config = write_config({"era": era_entry()})
    person = Person("grace")
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc:
        async with sdk_client(sc.url, sc.token, person, MODERN) as client:
            with anyio.fail_after(60):
                await sdk_wait_for_tools(client)
                result = await client.call_tool("era__twice", {})
                plain = await client.call_tool("era__echo", {"nonce": "n-7"})
    assert said(result) == "twice: grace / hi<greet grace>"
    assert [kind for kind, _ in person.asked] == ["elicit", "sample"]
    assert said(plain) == "n-7"


async def test_the_same_tools_on_a_session_still_ask_on_the_session(write_config, tmp_path: Path) -> None:
    """The legacy (2025-11-25) engine beside it: each question is a request on its session."""
    config = write_config({"era": era_entry()})
    person = Person("lin")
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc:
        async with sdk_client(sc.url, sc.token, person, "legacy") as client:
            await sdk_wait_for_tools(client)
            with anyio.fail_after(60):
                twice = await client.call_tool("era__twice", {})
                url = await client.call_tool("era__url", {})
                roots = await client.call_tool("era__roots", {})
    assert said(twice) == "twice: lin / hi<greet lin>"
    assert said(url) == "url:accept" and json.loads(said(roots)) == ["file:///work/project"]
    assert [kind for kind, _ in person.asked] == ["elicit", "sample", "elicit", "roots"]


async def test_an_engine_that_declared_nothing_leaves_the_upstream_refused(write_config, tmp_path: Path) -> None:
    """No elicitation declared: the upstream's question is refused naming the capability,
    and the call ends with what the upstream makes of that."""
    import aiohttp

    from tests.eras.eras_support import stateless_call, wait_for_tools

    events = tmp_path / "events.jsonl"
    config = write_config({"era": era_entry(events)})
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc, aiohttp.ClientSession() as http:
        await wait_for_tools(http, sc.url, sc.token)
        status, message = await stateless_call(http, sc.url, sc.token, "era__form", {}, capabilities={"sampling": {}})
    assert message["error"]["message"] == "the client did not declare the elicitation capability"
    assert status == 404  # the upstream passed the refusal on as its own error (-32601)
    refused = [e for e in read_event_file(events) if e["event"] == "refused"]
    assert refused and "elicitation" in refused[0]["message"]
