"""Issue 24, item 4: the caching hints of the 2026-07-28 front. Every cacheable result is
`private` (each answer is for one bot: the listings below leave out a tool the bot's
grant denies), and its `ttlMs` is never longer than the sidecar can keep true: 0 for a
listing the sidecar builds, the upstream's own ttl for a read, capped at a minute. An
upstream that says `public` with an hour's ttl never widens that. Against the `mcp` SDK's
low-level server at 2026-07-28 (tests/eras/changing_server.py `--modern --hints`), and
generated results for the stamp itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.front.http.caching import READ_TTL_CEILING_MS
from sidecar.front.http.stateless import CACHEABLE, stamp_answer
from sidecar.wire import Answer
from tests.eras.changing_support import COUNTER, open_stateless_server
from tests.eras.eras_support import MODERN, modern_headers, wait_for_tools
from tests.http.http_support import open_http_sidecar

LISTINGS = {"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources",
            "resources/templates/list": "resourceTemplates"}


async def _modern(client: aiohttp.ClientSession, url: str, token: str, method: str,
                  params: dict[str, Any] | None = None) -> dict[str, Any]:
    envelope = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**(params or {}), "_meta": envelope}}
    headers = {**modern_headers(token, (params or {}).get("uri", ""), method)}
    if "uri" not in (params or {}):
        headers.pop("Mcp-Name")
    async with client.post(url, json=body, headers=headers) as response:
        answer: dict[str, Any] = await response.json(content_type=None)
    assert "result" in answer, answer
    return answer["result"]  # type: ignore[no-any-return]


@pytest.mark.e2e
@pytest.mark.parametrize(("hints", "read_ttl"), [("public:3600000", READ_TTL_CEILING_MS), ("public:5000", 5000),
                                                 ("private:0", 0)])
async def test_every_cacheable_answer_is_private_and_never_outlives_what_the_sidecar_knows(
        write_config, tmp_path: Path, hints: str, read_ttl: int) -> None:
    async with open_stateless_server(hints=hints) as url:
        config = write_config({"changing": {"type": "http", "url": url, "pinning": "off"}},
                              grants={"deny": ["changing__bump"]})
        async with open_http_sidecar(config, tmp_path) as sc, aiohttp.ClientSession() as client:
            await wait_for_tools(client, sc.url, sc.token, "changing__echo")
            listed = {method: await _modern(client, sc.url, sc.token, method) for method in LISTINGS}
            read = await _modern(client, sc.url, sc.token, "resources/read", {"uri": COUNTER})
    for method, key in LISTINGS.items():
        assert (listed[method]["cacheScope"], listed[method]["ttlMs"]) == ("private", 0), method
        assert isinstance(listed[method][key], list)
    names = {tool["name"] for tool in listed["tools/list"]["tools"]}
    assert "changing__echo" in names and "changing__bump" not in names  # this bot's listing: private
    assert (read["cacheScope"], read["ttlMs"], read["resultType"]) == ("private", read_ttl, "complete")
    assert read["contents"][0]["text"] == "0"  # the upstream's content passed unchanged


_values = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=False, allow_infinity=False),  # JSON has no infinity
                    st.text(max_size=8), st.sampled_from(["public", "private"]))
_results = st.fixed_dictionaries({}, optional={"ttlMs": _values, "cacheScope": _values,
                                               "resultType": st.sampled_from(["complete", "input_required"]),
                                               "contents": st.lists(st.dictionaries(st.text(max_size=4),
                                                                                    st.integers(), max_size=2),
                                                                    max_size=2)})


@settings(max_examples=300, deadline=None)
@given(method=st.sampled_from(sorted(CACHEABLE)), result=_results, as_bytes=st.booleans(), pad=st.sampled_from(["", " \n"]))
def test_no_result_an_upstream_sends_widens_the_hints(method: str, result: dict[str, Any], as_bytes: bool,
                                                      pad: str) -> None:
    given_result: Any = msgspec.Raw((json.dumps(result) + pad).encode()) if as_bytes else dict(result)
    stamped = json.loads(stamp_answer(method, Answer(7, given_result)))["result"]
    ceiling = READ_TTL_CEILING_MS if method == "resources/read" else 0
    assert stamped["cacheScope"] == "private"
    assert type(stamped["ttlMs"]) is int and 0 <= stamped["ttlMs"] <= ceiling
    ttl = result.get("ttlMs")
    if type(ttl) is int and 0 <= ttl <= ceiling:
        assert stamped["ttlMs"] == ttl  # a ttl within the bound is the upstream's own
    assert stamped["resultType"] == result.get("resultType", "complete")
    assert {k: v for k, v in stamped.items() if k not in ("ttlMs", "cacheScope", "resultType")} == \
        {k: v for k, v in result.items() if k not in ("ttlMs", "cacheScope", "resultType")}
