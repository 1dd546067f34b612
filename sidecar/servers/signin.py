"""Whether a URL server that refused a check points to a sign-in (RFC 9728).

Owns two small probes over the upstream's own HTTP client (same proxy and redirect
rules, same headers): the `resource_metadata` parameter of the refusal's
`WWW-Authenticate` challenge, then the protected resource metadata document at the
server's well-known address. Refuses to read more than 64 KB of any answer, and returns
only yes or no: nothing the server says is shown.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit, urlunsplit

from sidecar.config import ServerConfig
from sidecar.errors import UpstreamUnavailable
from sidecar.upstream.outgoing import read_capped
from sidecar.upstream.webclient import WebClient

__all__ = ["find_sign_in", "well_known_addresses"]

BODY_CAP = 64 * 1024
_PROBE = json.dumps({
    "jsonrpc": "2.0", "id": 0, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "omb-sidecar-check", "version": "0"}},
}).encode()
_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def well_known_addresses(url: str) -> list[str]:
    """RFC 9728 §3.1: the path-specific metadata address first, then the origin's."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    found = [urlunsplit((parts.scheme, parts.netloc, f"/.well-known/oauth-protected-resource{path}", "", ""))]
    if path:
        found.append(urlunsplit((parts.scheme, parts.netloc, "/.well-known/oauth-protected-resource", "", "")))
    return found


async def find_sign_in(server: ServerConfig) -> bool:
    assert server.url is not None
    client = WebClient(server)
    try:
        if await _challenge_names_metadata(client):
            return True
        for address in well_known_addresses(server.url):
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
    try:
        document = json.loads(body)
    except ValueError:
        return False
    return isinstance(document, dict) and isinstance(document.get("authorization_servers"), list)
