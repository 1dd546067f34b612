"""Serving a request draws no aiohttp `NotAppKeyWarning` (the front hands its caller on
as an argument, under no request key, string or typed): a session request and a
stateless one, through the real front over an in-memory sidecar."""

from __future__ import annotations

import warnings

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from aiohttp.web_request import BaseRequest

from sidecar.front.http.listener import FrontSettings
from sidecar.front.http.routes import HttpFront
from sidecar.redact import Redactor
from tests.eras.eras_support import modern_headers
from tests.harness import FakeServer, in_memory, tool

pytestmark = [pytest.mark.timeout(60),
              pytest.mark.skipif(not hasattr(web, "RequestKey"), reason="this aiohttp has no request keys")]

TOKEN = "request-keys-token-0123456789abcdef"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


async def test_serving_requests_draws_no_request_key_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(BaseRequest, "_seen_str_keys", set())  # a string key would warn again here
    async with in_memory({"f": FakeServer([tool("echo")])}) as sidecar:
        await sidecar.settled()
        front = HttpFront(sidecar.face, Redactor([]), FrontSettings(host="127.0.0.1", port=0, token=TOKEN))
        site = TestServer(front.app(), host="127.0.0.1", port=0)
        await site.start_server()
        try:
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                async with aiohttp.ClientSession() as http:
                    url = str(site.make_url("/mcp"))
                    headers = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream"}
                    async with http.post(url, json=INIT, headers=headers) as answer:
                        assert answer.status == 200 and answer.headers.get("Mcp-Session-Id")
                    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": ENVELOPE}}
                    stateless = {k: v for k, v in modern_headers(TOKEN, "", "tools/list").items() if k != "Mcp-Name"}
                    async with http.post(url, json=listing, headers=stateless) as answer:
                        assert answer.status == 200, await answer.text()
                        assert "f__echo" in await answer.text()
        finally:
            front.held.stop_all("the test is over")
            await front.held.aclose()
            await site.close()
    assert not [w for w in seen if issubclass(w.category, web.NotAppKeyWarning)], [str(w.message) for w in seen]
