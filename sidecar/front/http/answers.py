"""How the HTTP front reads a POST's body and writes what it answers.

Owns, for every route: the body read under its cap (413, judged on `Content-Length`
before buffering, and again as it comes) and its read timeout (408); a JSON answer built
from its bytes with preset headers (no `json_response`, nothing parsed per request); and
an event stream, each frame an `event: message`, with a comment every `PING_SECONDS`
while nothing comes, which keeps proxies (and us) honest about a peer that is gone. An
exchange whose one answer came alone is answered as JSON; anything more makes the stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from aiohttp import web
from multidict import CIMultiDict

from sidecar.front.http.sessions import Exchange
from sidecar.front.http.stateless import answer_status
from sidecar.wire.outbox import FrameQueue

__all__ = ["PING_SECONDS", "SSE_HEADERS", "TooLarge", "answer_exchange", "event", "json_answer", "next_or_ping",
           "read_body", "stream", "stream_events"]

PING_SECONDS = 15.0
SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
_JSON = CIMultiDict({"Content-Type": "application/json"})  # copied by each Response: no per-request parsing


class TooLarge(Exception):
    """The body is over the cap (413)."""


def json_answer(body: bytes, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    """A JSON answer, built from its bytes."""
    return web.Response(body=body, status=status, headers={**_JSON, **headers} if headers else _JSON)


def event(frame: bytes) -> bytes:
    return b"event: message\ndata: " + frame.rstrip(b"\n") + b"\n\n"


async def read_body(request: web.Request, cap: int, seconds: float) -> bytes:
    """The whole body, at most `cap` bytes (else TooLarge), within `seconds` (else TimeoutError)."""
    length = request.headers.get("Content-Length")  # digits only: aiohttp's parser refused any other
    if length is not None and int(length) > cap:
        raise TooLarge
    content = request.content
    if content.is_eof() and content.total_bytes <= cap:  # all of it came with the headers: no wait, no timer
        return content.read_nowait()
    chunks: list[bytes] = []
    size = 0
    async with asyncio.timeout(seconds):
        while chunk := await content.read(65536):
            size += len(chunk)
            if size > cap:
                raise TooLarge
            chunks.append(chunk)
    return b"".join(chunks)


async def next_or_ping(queue: FrameQueue, response: web.StreamResponse) -> bytes | None:
    """The next frame; while none comes, a comment now and then."""
    while True:
        try:
            return await asyncio.wait_for(queue.get(), PING_SECONDS)
        except TimeoutError:
            await response.write(b": ping\n\n")


async def answer_exchange(request: web.Request, exchange: Exchange, headers: dict[str, str] | None,
                          stateless: bool = False) -> web.StreamResponse:
    """JSON when the answer came alone; else an event stream of everything (frames put
    while the handler waited to run, a held round's progress and then its question's
    answer, are all streamed). A stateless JSON error answer's status follows its code."""
    alone = await exchange.settled()
    if alone is not None:
        return json_answer(alone, answer_status(exchange.error_code) if stateless else 200, headers)
    response = web.StreamResponse(status=200, headers={**SSE_HEADERS, **headers} if headers else SSE_HEADERS)
    await response.prepare(request)
    frames = exchange.frames
    frame = await frames.get()
    while frame is not None:
        await response.write(event(frame))
        frame = await next_or_ping(frames, response)
    await response.write_eof()
    return response


async def stream(request: web.Request, frames: FrameQueue, written: Callable[[bytes], None]) -> web.StreamResponse:
    """An event stream of `frames` until None (a `subscriptions/listen`); `written` hears each frame sent."""
    response = web.StreamResponse(status=200, headers=SSE_HEADERS)
    await response.prepare(request)
    while (frame := await next_or_ping(frames, response)) is not None:
        written(frame)
        await response.write(event(frame))
    await response.write_eof()
    return response


async def stream_events(request: web.Request, frames: FrameQueue) -> web.StreamResponse:
    """A session's GET stream: its frames until None or b"" (the session closed)."""
    response = web.StreamResponse(status=200, headers=SSE_HEADERS)
    await response.prepare(request)
    while frame := await next_or_ping(frames, response):
        await response.write(event(frame))
    return response
