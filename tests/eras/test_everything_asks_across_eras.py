"""The TypeScript SDK's reference server (npm `@modelcontextprotocol/server-everything`,
session era, stdio) asks mid-call through the sidecar: form elicitation, URL elicitation
and sampling reach a 2026-07-28 engine (the mcp SDK's client) as input-required rounds,
and a 2025-11-25 engine on its session. The URL tool exists only because the sidecar now
declares URL mode; an engine that did not declare it has the question refused, named."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from tests.eras.eras_support import MODERN, Person, said, sdk_client, sdk_wait_for_tools
from tests.http.http_support import open_http_sidecar

pytestmark = pytest.mark.e2e

FORM = "ev__trigger-elicitation-request"
URL = "ev__trigger-url-elicitation"
SAMPLE = "ev__trigger-sampling-request"


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_form_url_and_sampling_of_server_everything(npm, write_config, tmp_path: Path, mode: str) -> None:
    config = write_config({"ev": {**npm.everything_entry(), "pinning": "off"}})
    person = Person("ada")
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc:
        async with sdk_client(sc.url, sc.token, person, mode) as client:
            await sdk_wait_for_tools(client, URL)
            with anyio.fail_after(60):
                form = said(await client.call_tool(FORM, {}))
                url = said(await client.call_tool(URL, {"url": "https://example.com/auth", "message": "Sign in"}))
                sampled = said(await client.call_tool(SAMPLE, {"prompt": "ping", "maxTokens": 16}))
    assert "- Name: ada" in form
    assert "User completed the URL elicitation flow" in url and "https://example.com/auth" in url
    assert "hi<" in sampled and "ping>" in sampled
    assert [kind for kind, _ in person.asked] == ["elicit", "elicit", "sample"]
    assert person.asked[1][1].mode == "url"


async def test_url_mode_is_refused_to_an_engine_that_declared_form_only(npm, write_config, tmp_path: Path) -> None:
    """A 2026-07-28 engine declaring `elicitation: {form: {}}`: the upstream's URL-mode
    question is refused before it reaches anyone, naming the mode; the call ends."""
    import aiohttp

    from tests.eras.eras_support import stateless_call, wait_for_tools

    config = write_config({"ev": {**npm.everything_entry(), "pinning": "off"}})
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc, aiohttp.ClientSession() as http:
        await wait_for_tools(http, sc.url, sc.token, URL)
        status, message = await stateless_call(http, sc.url, sc.token, URL, {"url": "https://example.com/a",
                                               "message": "Sign in"}, capabilities={"elicitation": {"form": {}}})
    assert "URL mode" in json.dumps(message), message
    assert "input_required" not in json.dumps(message)
