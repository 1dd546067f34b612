"""The client side of the MCP handshake and the list reads that follow it.

Sends only fields the specification defines; accepts an upstream that answers with any
handshake revision the sidecar knows; follows `nextCursor` pages with bounds on pages
and bytes.
"""

from __future__ import annotations

from typing import Any

import msgspec

from sidecar import __version__
from sidecar.errors import UpstreamError
from sidecar.upstream.connection import Connection

__all__ = ["HANDSHAKE_VERSIONS", "Handshake", "Listing", "handshake", "read_listing"]

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
CLIENT_CAPABILITIES: dict[str, Any] = {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {}}
MAX_PAGES = 1000
MAX_LIST_BYTES = 32 * 1024 * 1024


class Handshake(msgspec.Struct, frozen=True):
    protocol_version: str
    capabilities: dict[str, Any]
    server_info: dict[str, Any]
    instructions: str | None


class Listing(msgspec.Struct, frozen=True):
    tools: list[dict[str, Any]] = []
    tools_json: bytes = b""
    prompts: list[dict[str, Any]] = []
    resources: list[dict[str, Any]] = []
    templates: list[dict[str, Any]] = []


async def handshake(conn: Connection) -> Handshake:
    raw = await conn.request(
        "initialize",
        {
            "protocolVersion": HANDSHAKE_VERSIONS[-1],
            "capabilities": CLIENT_CAPABILITIES,
            "clientInfo": {"name": "omb-sidecar", "version": __version__},
        },
    )
    result = msgspec.json.decode(raw)
    if not isinstance(result, dict):
        raise UpstreamError("the upstream's initialize result is not an object")
    version = result.get("protocolVersion")
    if version not in HANDSHAKE_VERSIONS:
        raise UpstreamError(f"the upstream speaks an unknown protocol revision {version!r}")
    conn.notify("notifications/initialized")
    capabilities = result.get("capabilities")
    info = result.get("serverInfo")
    instructions = result.get("instructions")
    return Handshake(
        version,
        capabilities if isinstance(capabilities, dict) else {},
        info if isinstance(info, dict) else {},
        instructions if isinstance(instructions, str) else None,
    )


async def read_all_pages(conn: Connection, method: str, key: str) -> tuple[list[dict[str, Any]], bytes]:
    """Every item of a paginated list, and the items re-encoded (for quick scans)."""
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    total = 0
    for _ in range(MAX_PAGES):
        raw = await conn.request(method, {"cursor": cursor} if cursor else None)
        total += len(raw)
        if total > MAX_LIST_BYTES:
            raise UpstreamError(f"the upstream's {method} answer is over {MAX_LIST_BYTES} bytes")
        page = msgspec.json.decode(raw)
        found = page.get(key) if isinstance(page, dict) else None
        if isinstance(found, list):
            items.extend(i for i in found if isinstance(i, dict))
        following = page.get("nextCursor") if isinstance(page, dict) else None
        if not isinstance(following, str) or not following or following == cursor:
            break
        cursor = following
    return items, msgspec.json.encode(items)


async def read_listing(conn: Connection, capabilities: dict[str, Any], what: frozenset[str] | None = None) -> Listing:
    """Read the lists the upstream offers (`what` limits it to some of tools/prompts/resources)."""
    def wanted(kind: str) -> bool:
        return kind in capabilities and (what is None or kind in what)

    tools, tools_json = await read_all_pages(conn, "tools/list", "tools") if wanted("tools") else ([], b"[]")
    prompts = (await read_all_pages(conn, "prompts/list", "prompts"))[0] if wanted("prompts") else []
    resources: list[dict[str, Any]] = []
    templates: list[dict[str, Any]] = []
    if wanted("resources"):
        resources = (await read_all_pages(conn, "resources/list", "resources"))[0]
        try:
            templates = (await read_all_pages(conn, "resources/templates/list", "resourceTemplates"))[0]
        except UpstreamError:
            templates = []
    return Listing(tools, tools_json, prompts, resources, templates)
