"""The client side of the MCP handshake and the list reads that follow it.

Sends only fields the specification defines; accepts an upstream that answers with any
handshake revision the sidecar knows; probes a URL upstream with the 2026-07-28
`server/discover` first (asked once more when refused as an unsupported version by a
server naming 2026-07-28), keeps a session with a server that also takes `initialize`,
and falls back to `initialize` on anything that is not a 2026-07-28 answer; follows
`nextCursor` pages with bounds on pages and bytes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import msgspec

from sidecar.errors import UpstreamError, UpstreamUnavailable
from sidecar.upstream.connection import Connection, result_of
from sidecar.upstream.greeting import CLIENT_CAPABILITIES, CLIENT_INFO  # what the early greeting sends too
from sidecar.wire import decode_upstream_frame
from sidecar.wire.depth import too_deep
from sidecar.wire.versions import HANDSHAKE_VERSIONS, MODERN_VERSION

__all__ = [
    "HANDSHAKE_VERSIONS",
    "MODERN_VERSION",
    "Handshake",
    "Listing",
    "handshake",
    "is_big",
    "modern_envelope",
    "read_listing",
]

log = logging.getLogger(__name__)

# Declared to a 2026-07-28 server: every question a client answers, so it may answer a
# call with an input-required result; the sidecar puts each question to the engine of
# that call if the engine declared it, else the call ends naming the missing capability
# (sidecar.gate.asked, sidecar.front.eras.asking).
MODERN_CLIENT_CAPABILITIES: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}
UNSUPPORTED_VERSION = -32022  # 2026-07-28: the request's revision is not one the server speaks
MAX_PAGES = 1000
MAX_LIST_BYTES = 32 * 1024 * 1024
# A server past either figure is "big": it is listed as a trio, and a URL one gets
# BIG_START_SECONDS to start.
BIG_TOOLS = 40
BIG_DESCRIPTION_CHARS = 100_000
BIG_START_SECONDS = 30.0


class Handshake(msgspec.Struct, frozen=True):
    protocol_version: str
    capabilities: dict[str, Any]
    server_info: dict[str, Any]
    instructions: str | None


class Listing(msgspec.Struct, frozen=True):
    tools: list[dict[str, Any]] = []
    prompts: list[dict[str, Any]] = []
    resources: list[dict[str, Any]] = []
    templates: list[dict[str, Any]] = []


def modern_envelope() -> dict[str, Any]:
    """The per-request `_meta` a 2026-07-28 request carries."""
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
        "io.modelcontextprotocol/clientCapabilities": MODERN_CLIENT_CAPABILITIES,
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    }


async def handshake(conn: Connection, probe: bool = False) -> Handshake:
    """Open the conversation: `server/discover` first when `probe`, else (or failing that) initialize."""
    if probe:
        found = await discover(conn)
        if found is not None:
            return await _prefer_session(conn, found)
    return await initialize(conn)


async def _prefer_session(conn: Connection, modern: Handshake) -> Handshake:
    """A server that also speaks the handshake revisions keeps a stateful session: the
    sidecar relays its requests to the engine (sampling, elicitation, roots), its log
    messages, resource subscriptions and list changes, which 2026-07-28 carries in
    other ways. A 2026-07-28-only server refuses `initialize`, and is spoken to statelessly.
    Not the newer revision first: a server of the `mcp` SDK offers 2026-07-28 in its
    discover answer whatever its handlers return, and one whose handlers predate it
    answers its `tools/list` with "Handler returned an invalid result" in that revision
    (tests/http/sdk_http_server.py does).
    """
    try:
        return await initialize(conn)
    except (UpstreamError, UpstreamUnavailable, msgspec.DecodeError):  # refused, in words or by HTTP status
        return modern


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _offers_modern(exc: UpstreamError) -> bool:
    """An unsupported-version refusal that names 2026-07-28 among the server's revisions."""
    supported = _object(exc.data).get("supported")
    return exc.code == UNSUPPORTED_VERSION and isinstance(supported, list) and MODERN_VERSION in supported


async def _ask_discover(conn: Connection) -> Any:
    """The `server/discover` result; asked once more when the first was refused as an
    unsupported version by a server that names 2026-07-28 as one it supports."""
    try:
        return msgspec.json.decode(await conn.request("server/discover", {"_meta": modern_envelope()}))
    except UpstreamError as exc:
        if not _offers_modern(exc):
            raise
    return msgspec.json.decode(await conn.request("server/discover", {"_meta": modern_envelope()}))


async def discover(conn: Connection) -> Handshake | None:
    """A 2026-07-28 server's description, or None for anything that is not one."""
    try:
        result = await _ask_discover(conn)
    except (UpstreamError, UpstreamUnavailable, msgspec.DecodeError):  # not one: a refusal, an HTTP error
        return None
    supported = _object(result).get("supportedVersions")
    if not isinstance(supported, list) or MODERN_VERSION not in supported:
        return None
    meta = _object(result.get("_meta"))
    info = meta.get("io.modelcontextprotocol/serverInfo", result.get("serverInfo"))
    instructions = result.get("instructions")
    return Handshake(
        MODERN_VERSION,
        _object(result.get("capabilities")),
        _object(info),
        instructions if isinstance(instructions, str) else None,
    )


async def initialize(conn: Connection) -> Handshake:
    raw = await conn.request(
        "initialize",
        {
            "protocolVersion": HANDSHAKE_VERSIONS[-1],
            "capabilities": CLIENT_CAPABILITIES,
            "clientInfo": CLIENT_INFO,
        },
    )
    found = _initialized(raw)
    conn.notify("notifications/initialized")
    return found


def greeted(line: bytes) -> Handshake:
    """The handshake an early greeting held (`sidecar.upstream.greeting`: `initialized` was sent)."""
    return _initialized(answer_of(line))


def answer_of(line: bytes) -> msgspec.Raw:
    """The result of an answer line an early greeting held, read as the connection reads
    every frame (one depth scan, one decode); UpstreamError for an error answer or a frame
    the connection would not take whole."""
    frame = None if too_deep(line) else decode_upstream_frame(line)
    if frame is None:
        raise UpstreamError("the upstream's answer to the sidecar's first request is not valid JSON-RPC")
    return result_of(frame)


def _initialized(raw: msgspec.Raw) -> Handshake:
    result = msgspec.json.decode(raw)
    if not isinstance(result, dict):
        raise UpstreamError("the upstream's initialize result is not an object")
    version = result.get("protocolVersion")
    if version not in HANDSHAKE_VERSIONS:
        raise UpstreamError(f"the upstream speaks an unknown protocol revision {version!r}")
    instructions = result.get("instructions")
    return Handshake(
        version,
        _object(result.get("capabilities")),
        _object(result.get("serverInfo")),
        instructions if isinstance(instructions, str) else None,
    )


def is_big(tools: list[dict[str, Any]]) -> bool:
    if len(tools) > BIG_TOOLS:
        return True
    chars = sum(len(t.get("description") or "") for t in tools if isinstance(t.get("description"), str))
    return chars > BIG_DESCRIPTION_CHARS


PageSink = Callable[[list[dict[str, Any]]], None]


async def read_all_pages(
    conn: Connection, method: str, key: str, on_page: PageSink | None = None, first: msgspec.Raw | None = None
) -> list[dict[str, Any]]:
    """Every item of a paginated list; `first`: the first page's result, already read (by an
    early greeting)."""
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    total = 0
    for _ in range(MAX_PAGES):
        raw = first if first is not None else await conn.request(method, {"cursor": cursor} if cursor else None)
        first = None
        total += len(raw)
        if total > MAX_LIST_BYTES:
            raise UpstreamError(f"the upstream's {method} answer is over {MAX_LIST_BYTES} bytes")
        page = _decode_page(conn, method, raw)
        found = page.get(key) if isinstance(page, dict) else None
        if isinstance(found, list):
            items.extend(i for i in found if isinstance(i, dict))
        if on_page is not None:
            on_page(items)
        following = page.get("nextCursor") if isinstance(page, dict) else None
        if not isinstance(following, str) or not following or following == cursor:
            break
        cursor = following
    return items


def _decode_page(conn: Connection, method: str, raw: msgspec.Raw) -> Any:
    """A page of a list; one whose envelope passed but whose values msgspec refuses (a
    number out of range) is repaired value by value, not lost whole."""
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError:
        from sidecar.wire.repair import repair_frame  # loaded by the first page refused, not at start

        repair = repair_frame(bytes(raw))
    if repair is None:
        raise UpstreamError(f"the upstream's {method} answer is not valid JSON")
    conn.repaired_values += repair.values
    log.warning("upstream '%s' sent values that are not valid (%s) in its %s answer; replaced, the rest kept",
                conn.alias, ", ".join(repair.reasons), method)
    return msgspec.json.decode(repair.frame)


async def read_listing(
    conn: Connection,
    capabilities: dict[str, Any],
    what: frozenset[str] | None = None,
    on_tools_page: PageSink | None = None,
    first_tools: msgspec.Raw | None = None,
) -> Listing:
    """Read the lists the upstream offers (`what` limits it to some of tools/prompts/resources;
    `first_tools`: the first `tools/list` page's result, already read)."""
    def wanted(kind: str) -> bool:
        return kind in capabilities and (what is None or kind in what)

    tools = await read_all_pages(conn, "tools/list", "tools", on_tools_page, first_tools) if wanted("tools") else []
    prompts = await read_all_pages(conn, "prompts/list", "prompts") if wanted("prompts") else []
    resources: list[dict[str, Any]] = []
    templates: list[dict[str, Any]] = []
    if wanted("resources"):
        resources = await read_all_pages(conn, "resources/list", "resources")
        try:
            templates = await read_all_pages(conn, "resources/templates/list", "resourceTemplates")
        except (UpstreamError, UpstreamUnavailable):
            templates = []
    return Listing(tools, prompts, resources, templates)
