"""An upstream answer over its size cap reaches the engine in one shape on every front and
from every transport: the `Too large` label, the same code, and the words of
`sidecar.errors.refused_unread` (size, cap, what was capped). Generated over upstream
transport (a stdio line, a Streamable HTTP body, an SSE event) x front (stdio, an HTTP
session, a stateless 2026-07-28 request), with real upstreams and real sidecar processes;
the three fronts must answer each case byte-for-byte alike."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest
from http_support import HttpSidecar, http_sidecar  # noqa: F401 - fixture

from tests.upstream.hostile_http import serve_hostile

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

HOSTILE = Path(__file__).resolve().parents[1] / "upstreams" / "hostile_server.py"
CAP = 65_536
MODERN = "2026-07-28"
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
BIG = '{"jsonrpc":"2.0","id":{id},"result":{"content":[{"type":"text","text":"%s"}]}}'
WORDS = re.compile(r"Too large: upstream '(s|h|e)' sent an answer the sidecar refused unread "
                   r"\((\d+) bytes, over the 65536-byte (line|body|event) cap\)(; the call was not retried)?")


SIZES = (CAP + 1, 3 * CAP, 20 * CAP)  # the over-cap text's characters
PER_SIZE = 5  # cases per size, below


def cases() -> list[tuple[str, dict[str, Any]]]:
    """(method, params) of each over-cap answer: by transport, by size, call or not."""
    found: list[tuple[str, dict[str, Any]]] = []
    for size in SIZES:
        line = BIG % ("x" * size)
        found += [("tools/call", {"name": f"{alias}__say", "arguments": {"lines": [line]}}) for alias in "she"]
        found.append(("tools/call", {"name": "h__say", "arguments": {"lines": [line], "stream": True}}))
        found.append(("resources/read", {"uri": f"big://{size}"}))
    return found


def entries(http_url: str, sse_url: str) -> dict[str, Any]:
    capped = {"maxMessageBytes": CAP, "pinning": "off"}
    return {"s": {"command": sys.executable, "args": [str(HOSTILE)], **capped},
            "h": {"type": "http", "url": http_url, **capped},
            "e": {"type": "sse", "url": sse_url, **capped}}


def shape(answer: dict[str, Any]) -> str:
    """What the engine got, less what is each front's own (its id, the 2026 result type) and
    the size (the upstream's own id for the call, written in the answer, has as many digits
    as the calls made before it: the size is checked on its own)."""
    kept = {key: value for key, value in answer.items() if key != "id"}
    if isinstance(kept.get("result"), dict):
        kept["result"] = {key: value for key, value in kept["result"].items() if key != "resultType"}
    return re.sub(r"\(\d+ bytes", "(N bytes", json.dumps(kept, sort_keys=True))


def words_of(answer: dict[str, Any]) -> str:
    if "error" in answer:
        return str(answer["error"]["message"])
    return " ".join(c.get("text", "") for c in answer["result"]["content"])


async def over_stdio(raw_sidecar: Any, config: Path) -> list[dict[str, Any]]:
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["s__say", "h__say", "e__say"])
        return [await sc.request(method, params, timeout=30) for method, params in cases()]


async def _post(client: aiohttp.ClientSession, sc: HttpSidecar, body: Any, **headers: str) -> tuple[str, Any]:
    with anyio.fail_after(30):
        async with client.post(sc.url, data=json.dumps(body).encode(), headers=sc.headers(**headers)) as response:
            text = await response.text()
            session = response.headers.get("Mcp-Session-Id", "")
    if text.lstrip().startswith("{"):
        return session, json.loads(text)
    events = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    return session, json.loads(events[-1])


async def _listed(client: aiohttp.ClientSession, sc: HttpSidecar, session: str) -> None:
    with anyio.fail_after(30):
        while True:
            _, listed = await _post(client, sc, {"jsonrpc": "2.0", "id": "l", "method": "tools/list"},
                                    **{"Mcp-Session-Id": session})
            if {"s__say", "h__say", "e__say"} <= {t["name"] for t in listed["result"]["tools"]}:
                return
            await anyio.sleep(0.1)  # bounded above: upstreams still starting


async def over_http(http_sidecar: Any, config: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    in_session: list[dict[str, Any]] = []
    stateless: list[dict[str, Any]] = []
    async with http_sidecar(config) as sc, aiohttp.ClientSession() as client:
        session, _ = await _post(client, sc, INIT)
        await _listed(client, sc, session)
        for n, (method, params) in enumerate(cases()):
            body = {"jsonrpc": "2.0", "id": n + 1, "method": method, "params": params}
            in_session.append((await _post(client, sc, body, **{"Mcp-Session-Id": session,
                                                                 "MCP-Protocol-Version": "2025-11-25"}))[1])
            name = params.get("name", params.get("uri", ""))
            modern = {**body, "params": {**params, "_meta": ENVELOPE}}
            stateless.append((await _post(client, sc, modern, **{"MCP-Protocol-Version": MODERN, "Mcp-Method": method,
                                                                   "Mcp-Name": name}))[1])
    return in_session, stateless


async def test_an_answer_over_the_cap_reaches_every_front_in_one_shape(raw_sidecar: Any, http_sidecar: Any,
                                                                       write_config: Any) -> None:
    async with serve_hostile() as web:
        config = write_config(entries(web.http_url, web.sse_url), face={"listWaitSeconds": 20})
        stdio = await over_stdio(raw_sidecar, config)
        in_session, stateless = await over_http(http_sidecar, config)
    for n, (method, params) in enumerate(cases()):
        answers = [stdio[n], in_session[n], stateless[n]]
        assert shape(answers[0]) == shape(answers[1]) == shape(answers[2]), (method, params.get("name"), answers)
        for answer in answers:
            found = WORDS.fullmatch(words_of(answer))
            assert found is not None, words_of(answer)
            assert SIZES[n // PER_SIZE] < int(found.group(2)) <= SIZES[n // PER_SIZE] + 200  # the whole answer's size
        if method == "tools/call":
            assert answers[0]["result"]["isError"] is True and found.group(4) is not None
        else:
            assert answers[0]["error"]["code"] == -32000 and found.group(4) is None
