"""A stateless (2026-07-28) request's transient session is in the front's table while its
request runs and gone when it ends, answered or refused: the table is a plain set, so
nothing but the request's own end takes it out. Through the real front over an in-memory
sidecar."""

from __future__ import annotations

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from sidecar.front.http.listener import FrontSettings
from sidecar.front.http.routes import HttpFront
from sidecar.redact import Redactor
from tests.eras.eras_support import modern_headers
from tests.harness import FakeServer, in_memory, tool
from tests.harness.upstream import ScriptedCall

pytestmark = pytest.mark.timeout(60)

TOKEN = "passing-token-0123456789abcdef"
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def _call(ident: int, name: str) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call",
            "params": {"name": name, "arguments": {}, "_meta": ENVELOPE}}


def _echo(call: ScriptedCall) -> None:
    call.answer("echoed")


async def test_each_stateless_session_leaves_the_table_when_its_request_ends() -> None:
    async with in_memory({"f": FakeServer([tool("echo")], on_call=_echo)}) as sidecar:
        await sidecar.settled()
        front = HttpFront(sidecar.face, Redactor([]), FrontSettings(host="127.0.0.1", port=0, token=TOKEN))
        site = TestServer(front.app(), host="127.0.0.1", port=0)
        await site.start_server()
        try:
            async with aiohttp.ClientSession() as http:
                url = str(site.make_url("/mcp"))
                for ident, (name, status) in enumerate([("f__echo", 200), ("f__echo", 200), ("nope", 400)]):
                    async with http.post(url, json=_call(ident, name), headers=modern_headers(TOKEN, name)) as answer:
                        assert answer.status == status, await answer.text()  # the last: an unknown tool
                        assert (await answer.json())["id"] == ident
                    assert not front.table.passing
        finally:
            front.held.stop_all("the test is over")
            await front.held.aclose()
            await site.close()
