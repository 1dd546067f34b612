"""Legacy SSE upstreams (the 2024-11-05 HTTP+SSE transport): one GET event stream
carries everything the server sends; its first `endpoint` event names where frames are
POSTed.

Owns the event stream, the message address and the POSTs. Refuses a message address
on another origin (the configured headers would follow it there). The channel is gone
when the event stream ends: the session lives and dies with it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any
from urllib.parse import urljoin

import aiohttp

from sidecar.config import ServerConfig
from sidecar.errors import BrokeOff, SignInNeeded, UpstreamUnavailable
from sidecar.upstream.channel import Inbox, Outgoing
from sidecar.upstream.eventstream import EventStreamDecoder
from sidecar.upstream.outgoing import QueuedChannel
from sidecar.upstream.redirects import same_origin
from sidecar.upstream.replies import Replies
from sidecar.upstream.webclient import WebClient, refused
from sidecar.wire.framing import DEFAULT_LINE_CAP

__all__ = ["SseChannel", "open_sse_channel"]

log = logging.getLogger(__name__)


class SseChannel(QueuedChannel):
    """One legacy SSE session with an upstream (a Channel)."""

    def __init__(self, server: ServerConfig, inbox: Inbox, client: WebClient) -> None:
        self._client = client
        self._replies = Replies(inbox, client.scrub, client.scrub_result if client.scrubs_results else None)
        self._cap = server.max_message_bytes or DEFAULT_LINE_CAP
        loop = asyncio.get_running_loop()
        self._gone: asyncio.Future[None] = loop.create_future()
        self._endpoint: asyncio.Future[str] = loop.create_future()
        self._queue: asyncio.Queue[Outgoing] = asyncio.Queue()
        self._tasks: set[asyncio.Task[None]] = set()
        self._end: UpstreamUnavailable | None = None
        self._spawn(self._read_events())
        self._spawn(self._send_loop())

    # -- the Channel seam -------------------------------------------------------------

    def diagnostics(self) -> str:
        return "SSE stream open" if self._endpoint.done() and self._end is None else "SSE stream not open"

    async def stop(self) -> None:
        self._finish(UpstreamUnavailable("is shut down"))
        await self._cancel_tasks()
        await self._client.close()

    # -- the event stream -------------------------------------------------------------

    def _spawn(self, job: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(job)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _read_events(self) -> None:
        try:
            async with self._client.request("GET", headers={"Accept": "text/event-stream"}) as response:
                if response.status in (401, 403):
                    self._finish(refused(response.status, self._client.header_names))
                elif response.status >= 300:
                    self._finish(UpstreamUnavailable(f"answered HTTP {response.status}"))
                else:
                    await self._pump(response)
                    self._finish(UpstreamUnavailable("closed its event stream"))
        except UpstreamUnavailable as exc:
            self._finish(UpstreamUnavailable("closed its event stream") if isinstance(exc, BrokeOff) else exc)

    async def _pump(self, response: aiohttp.ClientResponse) -> None:
        decoder = EventStreamDecoder(self._cap, self._replies.stream_refused)
        async for chunk in response.content.iter_any():
            for event in decoder.feed(chunk):
                if event.event == "endpoint":
                    self._take_endpoint(event.data.strip())
                elif event.event == "message" and event.data.strip():
                    self._replies.deliver_body(event.data.encode())

    def _take_endpoint(self, address: str) -> None:
        if self._endpoint.done():
            return
        target = urljoin(self._client.url, address)
        if not same_origin(self._client.url, target):
            self._finish(UpstreamUnavailable("named a message address on another origin; not used"))
            return
        self._endpoint.set_result(target)

    # -- sending ----------------------------------------------------------------------

    async def _send_loop(self) -> None:
        endpoint = await self._endpoint
        while True:
            out = await self._queue.get()
            if out.method == "initialize":
                self._replies.watch_initialize(out.id)
            await self._post(endpoint, out)

    async def _post(self, endpoint: str, out: Outgoing) -> None:
        headers = {"Content-Type": "application/json"}
        try:
            async with self._client.request("POST", endpoint, body=out.frame, headers=headers) as response:
                if response.status in (401, 403):
                    self._replies.fault(out, refused(response.status, self._client.header_names))
                elif response.status >= 300:
                    self._replies.fault(out, UpstreamUnavailable(f"answered HTTP {response.status}"))
        except UpstreamUnavailable as exc:
            self._replies.fault(out, exc)
            if isinstance(exc, SignInNeeded):
                self._finish(exc)

    def _finish(self, fault: UpstreamUnavailable) -> None:
        if self._end is None:
            self._end = fault
            log.debug("SSE upstream ended: %s", fault.detail)
        while not self._queue.empty():
            self._replies.fault(self._queue.get_nowait(), self._end)
        if not self._endpoint.done():
            self._endpoint.cancel()
        if not self._gone.done():
            self._gone.set_result(None)


async def open_sse_channel(server: ServerConfig, inbox: Inbox) -> SseChannel:
    """A legacy SSE channel; the address and headers are checked before anything is sent."""
    from sidecar.upstream.oauth.runtime import source_for

    return SseChannel(server, inbox, WebClient(server, tokens=source_for(server)))
