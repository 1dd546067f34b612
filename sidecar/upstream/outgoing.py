"""What goes down a URL channel, with no sockets here: the typed message's fields a
request's headers mirror, the 2026-07-28 envelope learned from the `server/discover`
probe, the queue a channel's sending task takes messages from, and a body read under a
cap.

Owns the channel's side of the seam's down direction: a message arrives typed (an
`Outgoing`, encoded once by the connection); it is never parsed again here. Only a
2026-07-28 server's requests are encoded anew, with the envelope added to their params,
at this edge. Refuses a body over its cap (`TooLarge`), before buffering past it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import msgspec

from sidecar.errors import UpstreamUnavailable, refused_unread
from sidecar.upstream.channel import Outgoing
from sidecar.upstream.handshake import MAX_LIST_BYTES, MODERN_VERSION
from sidecar.upstream.replies import Replies
from sidecar.wire import UpstreamFrame
from sidecar.wire.framing import DEFAULT_LINE_CAP
from sidecar.wire.param_headers import header_value
from sidecar.wire.versions import CAPABILITIES_KEY

__all__ = ["MODERN_VERSION", "ModernEnvelope", "QueuedChannel", "answer_cap", "cancelled_id", "header_value",
           "named", "read_capped"]

ENVELOPE_PREFIX = "io.modelcontextprotocol/"
_NAME_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def answer_cap(out: Outgoing) -> int:
    """How large an answer to `out` may be: a listing page gets more room than a call."""
    return MAX_LIST_BYTES if (out.method or "").endswith("/list") else DEFAULT_LINE_CAP


def cancelled_id(out: Outgoing) -> int | str | None:
    """The request a `notifications/cancelled` names."""
    ident = out.param("requestId")
    return ident if type(ident) in (int, str) else None


def named(out: Outgoing) -> str | None:
    """The name a 2026-07-28 `Mcp-Name` header mirrors (a tool, a prompt, a resource's URI)."""
    key = _NAME_PARAM.get(out.method or "")
    value = out.param(key) if key else None
    return value if isinstance(value, str) else None


class ModernEnvelope:
    """The per-request envelope of a 2026-07-28 server, adopted once discover says so."""

    def __init__(self, meta: dict[str, Any]) -> None:
        self.meta = meta
        self.adopted = False

    @classmethod
    def offered(cls, probe: Outgoing) -> ModernEnvelope:
        meta = probe.param("_meta")
        keys = meta if isinstance(meta, dict) else {}
        return cls({k: v for k, v in keys.items() if k.startswith(ENVELOPE_PREFIX)})

    def judge(self, answer: UpstreamFrame) -> None:
        """The discover answer (already read): adopted if it offers the 2026-07-28 version."""
        try:
            result = msgspec.json.decode(answer.result) if answer.result else {}
        except msgspec.DecodeError:
            return
        supported = result.get("supportedVersions") if isinstance(result, dict) else None
        self.adopted = isinstance(supported, list) and MODERN_VERSION in supported

    def wrap(self, out: Outgoing) -> bytes:
        """The request with the envelope in its params, encoded at this edge."""
        if not out.is_request or out.method == "server/discover":
            return out.frame
        params = dict(out.params) if isinstance(out.params, dict) else {}
        meta = params.get("_meta")
        own = meta if isinstance(meta, dict) else {}
        params["_meta"] = {**own, **self.meta}
        if CAPABILITIES_KEY in own:  # a relayed call says what its own engine can be asked
            params["_meta"][CAPABILITIES_KEY] = own[CAPABILITIES_KEY]
        return msgspec.json.encode({"jsonrpc": "2.0", "id": out.id, "method": out.method, "params": params})

    @staticmethod
    def headers(out: Outgoing) -> dict[str, str]:
        headers = {"MCP-Protocol-Version": MODERN_VERSION, "Mcp-Method": out.method or ""}
        name = named(out)
        if name is not None:
            headers["Mcp-Name"] = header_value(name)
        return headers


async def read_capped(response: aiohttp.ClientResponse, cap: int) -> bytes:
    """The whole body, refused (`TooLarge`) before buffering past `cap` bytes."""
    if response.content_length is not None and response.content_length > cap:
        raise refused_unread(response.content_length, f"over the {cap}-byte body cap")
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_any():
        size += len(chunk)
        if size > cap:
            raise refused_unread(size, f"over the {cap}-byte body cap", or_more=True)
        chunks.append(chunk)
    return b"".join(chunks)


class QueuedChannel:
    """What the URL channels share of the Channel seam: messages are queued for a sending
    task; once the channel has ended, each request ends with the fault that ended it."""

    _gone: asyncio.Future[None]
    _queue: asyncio.Queue[Outgoing]
    _end: UpstreamUnavailable | None
    _tasks: set[asyncio.Task[None]]
    _replies: Replies

    async def _cancel_tasks(self) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)

    @property
    def gone(self) -> asyncio.Future[None]:
        return self._gone

    def send(self, message: Outgoing) -> None:
        if self._end is not None:
            self._replies.fault(message, self._end)
        else:
            self._queue.put_nowait(message)

    def ended(self) -> UpstreamUnavailable:
        return self._end or UpstreamUnavailable("stopped")
