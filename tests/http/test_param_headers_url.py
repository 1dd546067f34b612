"""`x-mcp-header` end to end (SEP-2243): the sidecar (stdio front) calling a scriptable
Streamable HTTP upstream whose tools carry the annotations. A call carries one
`Mcp-Param-*` header per annotated argument (base64 in its sentinel where the value is
not plain ASCII), in the 2026-07-28 revision and in a session alike; a tool whose
annotations are invalid is left out of the listing, with a log line naming it.
"""

from __future__ import annotations

import base64
import json

import pytest
from fake_upstream import FakeUpstream, serve_fake
from test_url_upstreams import started, url_entry, wait_in_log

pytestmark = pytest.mark.timeout(120)

ANNOTATED = [
    {"name": "lookup", "inputSchema": {"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "priority": {"type": "integer", "x-mcp-header": "Priority"},
        "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
        "text": {"type": "string"}}}},
    {"name": "bad_colon", "inputSchema": {"type": "object", "properties": {
        "value": {"type": "string", "x-mcp-header": "Region:Primary"}}}},
]


def the_call(fake: FakeUpstream) -> dict[str, str]:
    call = next(r for r in fake.requests if isinstance(r.body, dict) and r.body.get("method") == "tools/call")
    return call.headers


@pytest.mark.parametrize("modern_only", [True, False], ids=["2026-07-28", "session"])
async def test_annotated_arguments_are_mirrored_and_an_invalid_tool_is_left_out(raw_sidecar, write_config,
                                                                                 modern_only):
    fake_server = FakeUpstream(modern_only=modern_only, extra_tools=ANNOTATED)
    async with serve_fake(fake_server) as fake:
        async with await started(raw_sidecar, write_config, {"web": url_entry(fake.url)}) as sc:
            await sc.initialize()
            listed = {t["name"] for t in await sc.wait_for_tools(["web__lookup"])}
            assert "web__bad_colon" not in listed
            await wait_in_log(sc, "tool 'bad_colon' is left out")
            answer = await sc.call("web__lookup", {"region": "Z\u00fcrich", "priority": 42, "verbose": False,
                                                   "text": "not mirrored"})
            assert "echo" in json.dumps(answer["result"]), answer
    headers = the_call(fake)
    assert headers["Mcp-Param-Region"] == "=?base64?" + base64.b64encode("Z\u00fcrich".encode()).decode() + "?="
    assert headers["Mcp-Param-Priority"] == "42" and headers["Mcp-Param-Verbose"] == "false"
    assert not [name for name in headers if name.lower() == "mcp-param-text"]


async def test_a_discover_refused_as_unsupported_version_is_asked_once_more(raw_sidecar, write_config):
    async with serve_fake(FakeUpstream(modern_only=True, refuse_first_discover=True)) as fake:
        async with await started(raw_sidecar, write_config, {"new": url_entry(fake.url)}) as sc:
            await sc.initialize()
            await sc.wait_for_tools(["new__echo"])
    assert len(fake.bodies("server/discover")) == 2
    listing = next(r for r in fake.requests if isinstance(r.body, dict) and r.body.get("method") == "tools/list")
    assert listing.headers["MCP-Protocol-Version"] == "2026-07-28"
