"""Finding a URL server's sign-in: its challenge, its protected resource metadata, and
the authorization server behind it.

Owns the probe (one `initialize` POST through the upstream's own HTTP client, with its
configured headers but no bearer token), the metadata named by the challenge's
`resource_metadata` or found at the RFC 9728 well-known addresses (path first, then
root), and the first listed authorization server's metadata, each through the outbound
gate. Refuses a `resource_metadata` address off the server's own origin, and more than
64 KB of any answer; metadata is fetched without the server's headers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from sidecar.config import ServerConfig
from sidecar.errors import UpstreamUnavailable
from sidecar.upstream.oauth.choices import AuthServer, ResourceInfo, read_resource
from sidecar.upstream.oauth.discovery import Challenge, parse_challenge, protected_resource_addresses
from sidecar.upstream.oauth.exchange import FetchRefused, OAuthHttp
from sidecar.upstream.oauth.flow import SignInError
from sidecar.upstream.webclient import WebClient

__all__ = ["Found", "challenge_of", "locate", "resource_metadata"]

_PROBE = json.dumps({
    "jsonrpc": "2.0", "id": 0, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "omb-sidecar-signin", "version": "0"}},
}).encode()
_LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode()
_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@dataclass(frozen=True)
class Found:
    resource: ResourceInfo
    auth: AuthServer
    challenge: Challenge | None


async def challenge_of(server: ServerConfig) -> tuple[int, Challenge | None]:
    """The HTTP status of an unsigned `initialize`, and its Bearer challenge if refused. A
    server that lets `initialize` through unsigned is asked for its tools list in that
    session, whose refusal carries the challenge (and its scope)."""
    client = WebClient(server)
    try:
        async with client.request("POST", body=_PROBE, headers=_HEADERS) as response:
            if response.status in (401, 403):
                return response.status, parse_challenge(response.headers.get("WWW-Authenticate", ""))
            session = response.headers.get("Mcp-Session-Id")
            status = response.status
        if status == 400:  # a 2026-07-28 server, without sessions: its discovery request
            return await _modern_challenge(client, status)
        if status >= 300:
            return status, None
        headers = {**_HEADERS, "MCP-Protocol-Version": "2025-11-25"}
        if session:
            headers["Mcp-Session-Id"] = session
        async with client.request("POST", body=_LIST, headers=headers) as listed:
            if listed.status in (401, 403):
                return listed.status, parse_challenge(listed.headers.get("WWW-Authenticate", ""))
            return status, None
    except UpstreamUnavailable:
        return 0, None
    finally:
        await client.close()


async def _modern_challenge(client: WebClient, status: int) -> tuple[int, Challenge | None]:
    from sidecar.upstream.handshake import modern_envelope

    body = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "server/discover",
                       "params": {"_meta": modern_envelope()}}).encode()
    headers = {**_HEADERS, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}
    async with client.request("POST", body=body, headers=headers) as answer:
        if answer.status in (401, 403):
            return answer.status, parse_challenge(answer.headers.get("WWW-Authenticate", ""))
    return status, None


async def resource_metadata(server: ServerConfig, http: OAuthHttp, challenge: Challenge | None) -> ResourceInfo:
    """The protected resource metadata: where the challenge points, else the well-known
    addresses (RFC 9728 §3.1), path first."""
    assert server.url is not None
    addresses = protected_resource_addresses(server.url)
    if challenge is not None and challenge.resource_metadata:
        addresses.insert(0, challenge.resource_metadata)
    for address in addresses:  # all on the server's own origin (RFC 9728 §3.1; rule 17)
        status, document = await http.get_json(address, same_origin=True)
        if status == 200 and isinstance(document, dict) and "authorization_servers" in document:
            return read_resource(document, server.url)
    raise SignInError("the server names no sign-in (no RFC 9728 protected resource metadata)")


async def locate(server: ServerConfig, http: OAuthHttp) -> Found:
    """Everything a sign-in needs to know about where to sign in."""
    status, challenge = await challenge_of(server)
    try:
        resource = await resource_metadata(server, http, challenge)
    except FetchRefused:
        raise
    except SignInError:
        if status != 401:
            raise
        resource = _origin_as_issuer(server)  # a 2025-03-26 server: its own origin signs in
    auth = await http.auth_server(resource.authorization_servers[0])
    return Found(resource, auth, challenge)


def _origin_as_issuer(server: ServerConfig) -> ResourceInfo:
    """MCP 2025-03-26, before RFC 9728: the authorization server is the server's origin."""
    from urllib.parse import urlsplit

    from sidecar.upstream.oauth.discovery import canonical_resource

    assert server.url is not None
    parts = urlsplit(server.url)
    return ResourceInfo(resource=canonical_resource(server.url), authorization_servers=[f"{parts.scheme}://{parts.netloc}"],
                        scopes_supported=None)
