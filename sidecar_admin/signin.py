"""Whether a URL server that refused a check points to a sign-in (RFC 9728).

Owns two small probes over the upstream's own HTTP client (same proxy and redirect
rules, same headers): the `resource_metadata` parameter of the refusal's
`WWW-Authenticate` challenge, then the protected resource metadata document at the
server's well-known address. Refuses to read more than 64 KB of any answer, and returns
only yes or no: nothing the server says is shown. Also owns the call probe of a person's
check (`calls_refused`), for a server that asks who is calling only when a tool is called.
"""

from __future__ import annotations

import json
from typing import Any

from sidecar.config import ServerConfig
from sidecar.errors import Refused, SidecarError, SignInNeeded, UpstreamUnavailable
from sidecar.upstream.connection import Connection
from sidecar.upstream.oauth.discovery import protected_resource_addresses
from sidecar.upstream.oauth.documents import read_document
from sidecar.upstream.outgoing import read_capped
from sidecar.upstream.webclient import WebClient

__all__ = ["calls_refused", "find_sign_in", "probe_tool"]

BODY_CAP = 64 * 1024
_PROBE = json.dumps({
    "jsonrpc": "2.0", "id": 0, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "omb-sidecar-check", "version": "0"}},
}).encode()
_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


async def find_sign_in(server: ServerConfig) -> bool:
    assert server.url is not None
    client = WebClient(server)
    try:
        if await _challenge_names_metadata(client):
            return True
        for address in protected_resource_addresses(server.url):
            if await _metadata_at(client, address):
                return True
        return False
    finally:
        await client.close()


async def _challenge_names_metadata(client: WebClient) -> bool:
    try:
        async with client.request("POST", body=_PROBE, headers=_HEADERS) as response:
            challenge = response.headers.get("WWW-Authenticate", "")
            return response.status in (401, 403) and "resource_metadata" in challenge.lower()
    except UpstreamUnavailable:
        return False


async def _metadata_at(client: WebClient, address: str) -> bool:
    try:
        async with client.request("GET", address, headers={"Accept": "application/json"}) as response:
            if response.status != 200:
                return False
            body = await read_capped(response, BODY_CAP)
    except UpstreamUnavailable:
        return False
    document = read_document(body)  # nesting bounded: a 60,000-deep answer is just "no"
    return isinstance(document, dict) and isinstance(document.get("authorization_servers"), list)


_NO_SUCH_TOOL = "omb-sidecar-check-no-such-tool"


def probe_tool(tools: list[dict[str, Any]]) -> str | None:
    """The one tool a check may call with no arguments: marked read-only and not
    destructive, and requiring arguments, so a server that runs it has nothing to work on."""
    for tool in tools:
        notes = tool.get("annotations") if isinstance(tool.get("annotations"), dict) else {}
        schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {}
        assert isinstance(notes, dict) and isinstance(schema, dict)
        required = schema.get("required")
        if (notes.get("readOnlyHint") is True and notes.get("destructiveHint") is not True
                and isinstance(required, list) and required and isinstance(tool.get("name"), str)):
            return str(tool["name"])
    return None


async def calls_refused(conn: Connection, tools: list[dict[str, Any]]) -> Refused | None:
    """Whether a server that listed its tools asks who is calling only at call time: a
    tool name no server has first; if that is answered without asking, one read-only tool
    (see `probe_tool`) once, with no arguments. Returns the refusal, or None. A
    signed-in server that wants a wider sign-in raises its `SignInNeeded`: the caller
    decides by that type, never by the words."""
    refusal = await _refused(conn, _NO_SUCH_TOOL)
    name = probe_tool(tools)
    if refusal is None and name is not None:
        refusal = await _refused(conn, name)
    return refusal


async def _refused(conn: Connection, name: str) -> Refused | None:
    try:
        await conn.request("tools/call", {"name": name, "arguments": {}}, deadline=10.0)
    except SignInNeeded:
        raise  # a signed-in server that wants a wider sign-in: told by its type
    except Refused as exc:  # told by its type, never by the words
        return exc
    except SidecarError:
        pass
    return None
