"""Streamable HTTP upstreams: each frame the connection writes becomes one POST, and
every message the server sends (a JSON answer, the events of an answer stream, the
events of the GET stream) comes out through `on_line`, one message per call.

Owns the upstream's HTTP session: its `Mcp-Session-Id`, the `MCP-Protocol-Version`
header, the GET stream, resuming an answer stream with `Last-Event-ID`, and DELETE on
close. With a 2026-07-28 server (learned from its `server/discover` answer) there is no
session: every request carries the envelope and the `Mcp-Method`/`Mcp-Name` headers,
and a cancellation closes that request's stream. Refuses to let one failed POST end
the connection: a refusal or a 5xx ends that request only, with its typed fault.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

import aiohttp
import msgspec

from sidecar.config import ServerConfig
from sidecar.errors import SignInNeeded, Unreachable, UpstreamUnavailable, refusal
from sidecar.upstream.channel import Inbox, Outgoing
from sidecar.upstream.eventstream import EventStreamDecoder
from sidecar.upstream.outgoing import (
    MODERN_VERSION,
    ModernEnvelope,
    QueuedChannel,
    answer_cap,
    cancelled_id,
    read_capped,
)
from sidecar.upstream.replies import Replies
from sidecar.upstream.webclient import WebClient, refused
from sidecar.wire import UpstreamFrame
from sidecar.wire.framing import DEFAULT_LINE_CAP
from sidecar.wire.param_headers import ParamHeaders
from sidecar.wire.salvage import DroppedFrame

__all__ = ["HttpChannel", "open_http_channel"]

log = logging.getLogger(__name__)

ACCEPT_BOTH = "application/json, text/event-stream"
SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
RESUME_ATTEMPTS = 3
LISTEN_BACKOFF = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)


class HttpChannel(QueuedChannel):
    """One Streamable HTTP connection to an upstream (a Channel)."""

    def __init__(self, server: ServerConfig, inbox: Inbox, client: WebClient) -> None:
        self._client = client
        self._replies = Replies(inbox, client.scrub, client.scrub_result if client.scrubs_results else None)
        self._cap = server.max_message_bytes
        self._replies.on_initialized = self.learn_version
        self._replies.on_initialize_refused = self.initialize_refused
        self._replies.on_discovered = self._judge
        loop = asyncio.get_running_loop()
        self._gone: asyncio.Future[None] = loop.create_future()
        self._queue: asyncio.Queue[Outgoing] = asyncio.Queue()
        self._tasks: set[asyncio.Task[None]] = set()
        self._by_id: dict[int | str, asyncio.Task[None]] = {}
        self._session_id: str | None = None
        self._version: str | None = None
        self._modern: ModernEnvelope | None = None
        self._offer: ModernEnvelope | None = None  # a 2026-07-28 answer kept while initialize is tried
        self._started = False  # the handshake finished: failures no longer end the channel
        self.param_headers = ParamHeaders()  # taught by the supervisor from each tool listing
        self._end: UpstreamUnavailable | None = None
        self._spawn(self._send_loop())

    # -- the Channel seam -------------------------------------------------------------

    def diagnostics(self) -> str:
        return f"HTTP session {'open' if self._session_id else 'none'}, protocol {self._version or '?'}"

    async def stop(self) -> None:
        """Cancel every exchange, DELETE the session, close the client. Never raises."""
        self._finish(UpstreamUnavailable("is shut down"))
        await self._cancel_tasks()
        try:
            if self._session_id is not None:
                await asyncio.wait_for(self._delete_session(), 2.0)
        except (UpstreamUnavailable, asyncio.TimeoutError):
            pass
        finally:
            await self._client.close()

    # -- sending ----------------------------------------------------------------------

    def _spawn(self, job: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(job)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _send_loop(self) -> None:
        while True:
            out = await self._queue.get()
            if self._adopted and self._modern_notification(out):
                continue
            if out.method == "server/discover":
                self._modern = ModernEnvelope.offered(out)
                self._replies.watch_discover(out.id)
            elif out.method == "initialize":
                self._offer, self._modern = self._modern, None  # the handshake era, unless refused
                self._version, self._started = None, False
                self._replies.watch_initialize(out.id)
            opened = asyncio.Event()
            task = self._spawn(self._exchange(out, opened))
            if out.is_request:
                assert out.id is not None
                self._track(out.id, task)
            if out.is_barrier:
                await opened.wait()  # the session id and version are known before anything else goes

    def _track(self, ident: int | str, task: asyncio.Task[None]) -> None:
        """Our requests' exchanges by id, so a 2026-07-28 cancellation can close the right one."""
        self._by_id[ident] = task
        task.add_done_callback(lambda done: self._untrack(ident, done))

    def _untrack(self, ident: int | str, task: asyncio.Task[None]) -> None:
        if self._by_id.get(ident) is task:
            del self._by_id[ident]

    def _modern_notification(self, out: Outgoing) -> bool:
        """A 2026-07-28 server takes no notifications: a cancel closes the request's stream."""
        if out.id is not None:
            return False
        if out.method == "notifications/cancelled":
            ident = cancelled_id(out)
            task = self._by_id.get(ident) if ident is not None else None
            if task is not None:
                task.cancel()
        return True

    def _headers(self, out: Outgoing) -> dict[str, str]:
        headers = {"Accept": ACCEPT_BOTH, "Content-Type": "application/json"}
        if out.method == "tools/call":  # asked for by the tool's own annotations, in either era
            headers.update(self.param_headers.for_call(out.params))
        if self._adopted or out.method == "server/discover":
            headers.update(ModernEnvelope.headers(out))
            return headers
        if self._session_id is not None:
            headers[SESSION_HEADER] = self._session_id
        if self._version is not None:
            headers[VERSION_HEADER] = self._version
        return headers

    async def _exchange(self, out: Outgoing, opened: asyncio.Event) -> None:
        body = self._modern.wrap(out) if self._modern is not None and self._adopted else out.frame
        try:
            async with self._client.request("POST", body=body, headers=self._headers(out)) as response:
                self._learn(out, response)
                opened.set()
                await self._take_answer(out, response)
        except UpstreamUnavailable as exc:
            self._replies.fault(out, exc)
            if not self._started or isinstance(exc, (Unreachable, SignInNeeded)):
                self._finish(exc)  # the server is gone: the supervisor restarts the connection
        except Exception as exc:  # a fault of ours: the request still gets its one answer
            log.error("upstream exchange failed inside the sidecar (%s)", type(exc).__name__)  # its words may hold data
            self._replies.fault(out, UpstreamUnavailable(f"could not be sent ({type(exc).__name__} in the sidecar)"))
        finally:
            opened.set()

    def _learn(self, out: Outgoing, response: aiohttp.ClientResponse) -> None:
        session = response.headers.get(SESSION_HEADER)
        if out.method == "initialize" and session and response.status < 300:
            self._session_id = session
        if out.method == "notifications/initialized" and response.status < 300:
            self._started = True
            self._spawn(self._listen())

    @property
    def _adopted(self) -> bool:
        return self._modern is not None and self._modern.adopted

    def _judge(self, answer: UpstreamFrame) -> None:
        if self._modern is not None:
            self._modern.judge(answer)
            if self._modern.adopted:
                self._version = MODERN_VERSION
                self._started = True

    # -- answers ----------------------------------------------------------------------

    async def _take_answer(self, out: Outgoing, response: aiohttp.ClientResponse) -> None:
        status = response.status
        if status in (202, 204) or (status < 300 and out.id is None):
            return
        if status in (401, 403):
            self._refused(out, status)
        elif status == 404 and self._session_id is not None:
            self._replies.fault(out, UpstreamUnavailable("ended the session; the call was not retried"))
            self._finish(UpstreamUnavailable("ended its session"))
        elif status >= 300:
            await self._http_error(out, response)
        elif response.content_type == "text/event-stream":
            await self._read_stream(out, response)
        else:
            self._deliver_json(out, await read_capped(response, self._answer_cap(out)))

    def _answer_cap(self, out: Outgoing) -> int:
        cap = answer_cap(out)
        return min(cap, self._cap) if self._cap else cap

    def _refused(self, out: Outgoing, status: int) -> None:
        if not self._started:
            self._replies.fault(out, refused(status, self._client.header_names))
            return
        names = ", ".join(self._client.header_names) or "its sign-in"
        self._replies.fault(out, refusal(
            status, f"refused the request (HTTP {status}): send the message again; "
            f"if it fails again, have the server's sign-in or its headers ({names}) checked"))

    async def _http_error(self, out: Outgoing, response: aiohttp.ClientResponse) -> None:
        try:
            body = await read_capped(response, 65536)
        except UpstreamUnavailable:
            body = b""
        if not self._replies.deliver_error_for(out, body):
            self._replies.fault(out, UpstreamUnavailable(f"answered HTTP {response.status}"))

    def _deliver_json(self, out: Outgoing, body: bytes) -> None:
        delivered = self._replies.deliver_body(body, out)
        if out.id is not None and out.id not in delivered:
            self._replies.fault(out, UpstreamUnavailable("sent an answer that could not be read"))

    async def _read_stream(self, out: Outgoing, response: aiohttp.ClientResponse) -> None:
        refused: list[DroppedFrame] = []
        decoder = EventStreamDecoder(self._answer_cap(out), refused.append)
        answered = await self._pump(out, response, decoder, refused)
        for _ in range(RESUME_ATTEMPTS):
            if answered or decoder.last_id is None or self._session_id is None:
                break
            answered = await self._resume(out, decoder, refused)
        if not answered and out.id is not None:
            self._replies.fault(out, UpstreamUnavailable("closed the stream before answering; the call was not retried"))

    async def _pump(self, out: Outgoing, response: aiohttp.ClientResponse, decoder: EventStreamDecoder,
                    refused: list[DroppedFrame]) -> bool:
        answered = False
        try:
            async for chunk in response.content.iter_any():
                for event in decoder.feed(chunk):
                    if event.event == "message" and event.data.strip():
                        answered = out.id in self._replies.deliver_body(event.data.encode(), out) or answered
                while refused:  # an event over the cap: if it was the answer, the call ends here
                    answered = self._replies.refused(refused.pop(0), out) == out.id or answered
                if answered:
                    return True
        except (aiohttp.ClientError, asyncio.TimeoutError):
            pass
        return answered

    async def _resume(self, out: Outgoing, decoder: EventStreamDecoder, refused: list[DroppedFrame]) -> bool:
        await asyncio.sleep((decoder.retry_ms or 500) / 1000)
        headers = {**self._headers(out), "Accept": "text/event-stream", "Last-Event-ID": decoder.last_id or ""}
        headers.pop("Content-Type", None)
        try:
            async with self._client.request("GET", headers=headers) as response:
                if response.status != 200:
                    return False
                return await self._pump(out, response, decoder, refused)
        except UpstreamUnavailable:
            return False

    # -- the GET stream ---------------------------------------------------------------

    async def _listen(self) -> None:
        """Server-initiated messages; reconnects with backoff while the channel lives."""
        decoder = EventStreamDecoder(self._cap or DEFAULT_LINE_CAP, self._listen_refused)
        failures = 0
        while self._end is None:
            headers = {"Accept": "text/event-stream", SESSION_HEADER: self._session_id or ""}
            if self._version:
                headers[VERSION_HEADER] = self._version
            if decoder.last_id:
                headers["Last-Event-ID"] = decoder.last_id
            try:
                async with self._client.request("GET", headers=headers) as response:
                    if response.status in (404, 405):
                        return  # no stream of its own (some servers say 404); a POST learns of an ended session
                    if response.status >= 300:
                        raise UpstreamUnavailable(f"answered HTTP {response.status}")
                    failures = 0
                    async for chunk in response.content.iter_any():
                        for event in decoder.feed(chunk):
                            if event.event == "message" and event.data.strip():
                                self._replies.deliver_body(event.data.encode())
            except (UpstreamUnavailable, aiohttp.ClientError, asyncio.TimeoutError):
                failures += 1
            await asyncio.sleep(LISTEN_BACKOFF[min(failures, len(LISTEN_BACKOFF) - 1)])

    def _listen_refused(self, notice: DroppedFrame) -> None:
        """Answers come on POST streams: one unreadable message here fails no call in flight."""
        self._replies.stream_refused(msgspec.structs.replace(notice, may_answer=False))

    # -- the end ----------------------------------------------------------------------

    def _finish(self, fault: UpstreamUnavailable) -> None:
        if self._end is None:
            self._end = fault
        if not self._gone.done():
            self._gone.set_result(None)

    async def _delete_session(self) -> None:
        headers = {SESSION_HEADER: self._session_id or ""}
        if self._version:
            headers[VERSION_HEADER] = self._version
        async with self._client.request("DELETE", headers=headers):
            pass

    def learn_version(self, version: str) -> None:
        self._version = version
        self._offer = None

    def initialize_refused(self) -> None:
        """A 2026-07-28-only server refused the handshake: back to the stateless envelope."""
        if self._offer is not None and self._offer.adopted:
            self._modern, self._version, self._started = self._offer, MODERN_VERSION, True


async def open_http_channel(server: ServerConfig, inbox: Inbox) -> HttpChannel:
    """A Streamable HTTP channel; the address and headers are checked before anything is sent."""
    from sidecar.upstream.oauth.runtime import source_for

    return HttpChannel(server, inbox, WebClient(server, tokens=source_for(server)))

