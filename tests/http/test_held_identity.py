"""Held results belong to the caller identity (the bearer token's digest), over real HTTP.

Two stateless (2026-07-28) clients with different tokens: one's handle, asked for by
the other, gets exactly the answer a made-up handle gets; the owner reads it. A second
client with the SAME token is the same identity and reads it too (the documented
model). The session revision: a session opened with one token is "Session not found"
to another, for POST, GET and DELETE alike."""

from __future__ import annotations

import json
import secrets
from typing import Any

import aiohttp
import pytest
from http_support import TOKEN, HttpSidecar, http_sidecar  # noqa: F401 - fixture

pytestmark = pytest.mark.timeout(120)

OTHER = "other-token-" + "9" * 20
MODERN = "2026-07-28"
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


class Client:
    """One HTTP client: its own connection pool and its own bearer token."""

    def __init__(self, sc: HttpSidecar, token: str) -> None:
        self.sc, self.token, self.ids = sc, token, iter(range(10, 10**6))

    async def post(self, body: Any, **headers: str) -> tuple[int, dict[str, str], bytes]:
        sent = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream", **headers}
        async with aiohttp.ClientSession() as client:
            async with client.post(self.sc.url, data=json.dumps(body).encode(), headers=sent) as response:
                return response.status, dict(response.headers), await response.read()

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A stateless tools/call; the tool result."""
        body = {"jsonrpc": "2.0", "id": next(self.ids), "method": "tools/call",
                "params": {"name": name, "arguments": arguments, "_meta": ENVELOPE}}
        status, _, answer = await self.post(body, **{"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call",
                                                     "Mcp-Name": name})
        assert status == 200, answer
        result: dict[str, Any] = json.loads(answer)["result"]
        return result


def _text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


async def _held_handle(client: Client) -> str:
    for _ in range(3):  # the upstream may still be starting on the first call
        result = await client.call("f__records", {"count": 300})
        if not result.get("isError"):
            return str(json.loads(_text(result))["handle"])
    raise AssertionError(f"no held result: {result}")


async def test_a_foreign_handle_looks_exactly_like_a_missing_one(http_sidecar, fault_server_entry, write_config) -> None:
    config = write_config({"f": fault_server_entry()}, face={"listWaitSeconds": 20})
    async with http_sidecar(config, more_tokens=(OTHER,)) as sc:
        owner, stranger, twin = Client(sc, TOKEN), Client(sc, OTHER), Client(sc, TOKEN)
        handle = await _held_handle(owner)
        mine = await owner.call("query_result", {"handle": handle, "query": "length(@)"})
        assert _text(mine) == "300" and not mine.get("isError")

        forged = "h_" + secrets.token_urlsafe(16)
        assert len(forged) == len(handle)
        foreign = await stranger.call("query_result", {"handle": handle, "query": "length(@)"})
        missing = await stranger.call("query_result", {"handle": forged, "query": "length(@)"})
        assert foreign["isError"] is True
        assert json.dumps(foreign).replace(handle, "H") == json.dumps(missing).replace(forged, "H")

        their_own = await _held_handle(stranger)  # the stranger's own results are its own
        assert _text(await stranger.call("query_result", {"handle": their_own, "query": "[0].id"})) == "0"
        assert (await owner.call("query_result", {"handle": their_own, "query": "[0].id"}))["isError"] is True

        # One token is one identity: another client presenting it reads the handle.
        assert _text(await twin.call("query_result", {"handle": handle, "query": "length(@)"})) == "300"


async def test_a_session_is_not_found_by_another_token(http_sidecar, write_config) -> None:
    config = write_config({})
    async with http_sidecar(config, more_tokens=(OTHER,)) as sc:
        owner, stranger = Client(sc, TOKEN), Client(sc, OTHER)
        status, headers, _ = await owner.post(INIT)
        assert status == 200
        session = {"Mcp-Session-Id": headers["Mcp-Session-Id"]}
        unknown = {"Mcp-Session-Id": secrets.token_urlsafe(24)}
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        foreign = await stranger.post(listing, **session)
        missing = await stranger.post(listing, **unknown)
        assert foreign[0] == missing[0] == 404 and foreign[2] == missing[2]
        async with aiohttp.ClientSession() as client:
            auth = {"Authorization": f"Bearer {OTHER}", "Accept": "text/event-stream"}
            async with client.get(sc.url, headers={**auth, **session}) as response:
                assert response.status == 404
            async with client.delete(sc.url, headers={**auth, **session}) as response:
                assert response.status == 404
        status, _, body = await owner.post(listing, **session)  # still the owner's, still open
        assert status == 200 and "result" in json.loads(body)


def test_each_token_of_a_token_file_is_its_own_identity(tmp_path) -> None:
    from sidecar.front.http.admission import GuardError, caller_identity, load_tokens

    path = tmp_path / "tokens"
    path.write_text(f"{TOKEN}\n\n{OTHER}\n{TOKEN}\n")
    tokens = load_tokens(str(path), None)
    assert tokens == (TOKEN, OTHER)
    first, second = (caller_identity(f"Bearer {t}", tokens) for t in tokens)
    assert first and second and first != second and first.startswith("token:") and len(first) == 38
    assert TOKEN not in first and caller_identity("Bearer nope-0123456789abcdef", tokens) is None
    assert caller_identity(f"Bearer {TOKEN}", (TOKEN,)) == first  # the same on every replica: a digest, no key
    path.write_text(f"{TOKEN}\nshort\n")
    with pytest.raises(GuardError):
        load_tokens(str(path), None)
