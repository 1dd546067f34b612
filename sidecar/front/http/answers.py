"""How the HTTP front reads a POST's body and writes what it answers.

Owns, for every route: the body read under its cap (413, judged on `Content-Length`
before buffering, and again as it comes) and its read timeout (408); a JSON answer written
whole, its status line and headers formatted here from its bytes in one write (`JsonAnswer`:
no header multidict, no `json_response`, nothing parsed per request); and
an event stream, each frame an `event: message`, with a comment every `PING_SECONDS`
while nothing comes, which keeps proxies (and us) honest about a peer that is gone. An
exchange whose one answer came alone is answered as JSON; anything more makes the stream.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from functools import partial
from email.utils import formatdate
from http import HTTPStatus
from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractStreamWriter
from aiohttp.http import SERVER_SOFTWARE, HttpVersion11
from aiohttp.streams import StreamReader
from multidict import CIMultiDict

from sidecar.front.http.sessions import Exchange
from sidecar.front.http.stateless import answer_status
from sidecar.wire.outbox import FrameQueue

__all__ = ["PING_SECONDS", "SSE_HEADERS", "JsonAnswer", "TooLarge", "answer_exchange", "body_at_hand", "early_writer",
           "event", "json_answer",
           "next_or_ping", "read_body", "stream", "stream_events"]

PING_SECONDS = 15.0
SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
_SERVER = f"Server: {SERVER_SOFTWARE}\r\n".encode("latin-1")
_UNSAFE = frozenset("\r\n\0")  # never in a header line written here (aiohttp refuses them too)
_date_second = -1
_date_line = b""


class TooLarge(Exception):
    """The body is over the cap (413)."""


def _date() -> bytes:
    """The `Date` header line, formatted once a second."""
    global _date_second, _date_line
    now = int(time.time())
    if now != _date_second:
        _date_second, _date_line = now, f"Date: {formatdate(now, usegmt=True)}\r\n".encode("ascii")
    return _date_line


def _status_line(version: tuple[int, int], status: int) -> bytes:
    return f"HTTP/{version[0]}.{version[1]} {status} {HTTPStatus(status).phrase}\r\n".encode("ascii")


_OK_JSON_11 = _status_line(HttpVersion11, 200) + b"Content-Type: application/json\r\nContent-Length: "
_SERVER_END = _SERVER + b"\r\n"
_DIRECT_BYTES = 0x10000  # an answer at most this long goes to the transport itself (aiohttp's drain limit)


class JsonAnswer(web.StreamResponse):
    """A JSON answer written whole: when aiohttp finishes the request (`prepare`, then
    `write_eof`), the status line, the headers (`Content-Type`, any `extra`, `Content-Length`,
    `Date`, `Server`, and `Connection` as aiohttp would set it) and the body go out in one
    write, formatted here from bytes. The headers are not kept in a multidict per answer;
    `headers` builds one on demand."""

    def __init__(self, body: bytes, status: int = 200, extra: dict[str, str] | None = None) -> None:
        # No `StreamResponse.__init__`: its header multidict and status look-up are what this skips.
        self._state: dict[Any, Any] = {}
        self._status = status
        self._version = HttpVersion11
        self._head_only = False
        self._body_bytes = body
        self._extra = extra
        if extra and any(_UNSAFE.intersection(name + value) for name, value in extra.items()):
            raise ValueError("a header line may not hold a line break or NUL")

    @property
    def reason(self) -> str:
        return HTTPStatus(self._status).phrase

    @property
    def headers(self) -> CIMultiDict[str]:
        return CIMultiDict({"Content-Type": "application/json", **(self._extra or {}),
                            "Content-Length": str(len(self._body_bytes))})

    async def prepare(self, request: web.BaseRequest) -> AbstractStreamWriter | None:
        if self._eof_sent:
            return None
        if self._payload_writer is None:
            if self._keep_alive is None:  # unless `force_close` said otherwise, as aiohttp's own
                self._keep_alive = request.keep_alive
            self._version = request.version
            self._head_only = request.method == "HEAD"  # its length is said, its body not sent
            self._payload_writer = request.writer
        return self._payload_writer

    async def write_eof(self, data: bytes = b"") -> None:
        if self._eof_sent:
            return
        writer = self._payload_writer
        assert writer is not None
        body = self._body_bytes
        whole = self._bytes()
        self._eof_sent = True
        self._payload_writer = None
        if len(whole) > _DIRECT_BYTES:
            await writer.write(whole)  # a closed peer raises ConnectionError: aiohttp counts it a hang-up
        else:  # as aiohttp's writer does it, which drains only past the same size
            transport = writer.transport
            if transport is None or transport.is_closing():
                raise ConnectionResetError("Cannot write to closing transport")
            transport.write(whole)
        self._body_length = len(body)

    def _bytes(self) -> bytes:
        body = self._body_bytes
        if self._status == 200 and self._keep_alive and self._version == HttpVersion11 and not self._extra \
                and not self._head_only:  # the call's answer on a kept-alive connection
            return b"".join((_OK_JSON_11, b"%d\r\n" % len(body), _date(), _SERVER_END, body))
        return self._whole()

    def _whole(self) -> bytes:
        """The answer's bytes, any status, version, extra header or connection."""
        version, status, keep_alive, extra = self._version, self._status, self._keep_alive, self._extra
        lines = [_status_line(version, status), b"Content-Type: application/json\r\n"]
        if extra:
            lines.extend(f"{name}: {value}\r\n".encode("latin-1") for name, value in extra.items())
        lines += (b"Content-Length: %d\r\n" % len(self._body_bytes), _date(), _SERVER)
        if keep_alive and version != HttpVersion11:
            lines.append(b"Connection: keep-alive\r\n")
        elif not keep_alive and version == HttpVersion11:
            lines.append(b"Connection: close\r\n")
        lines.append(b"\r\n")
        if not self._head_only:
            lines.append(self._body_bytes)
        return b"".join(lines)


def early_writer(request: web.Request) -> Callable[[bytes], object]:
    """What writes a POST's one JSON answer (status 200, no extra header) the moment it
    comes, from the callback that brought it (`Exchange.early`), one pass of the loop and
    the handler's wind-down before the handler could: it returns the `JsonAnswer`, written
    and ended, for the handler to give aiohttp (which then writes nothing), or None to
    leave the answer to the handler: an answer over `_DIRECT_BYTES` (it must drain) or a
    connection closing (the handler's write then tells aiohttp of the hang-up)."""
    return partial(_write_early, request)


def _write_early(request: web.Request, body: bytes) -> JsonAnswer | None:
    if len(body) > _DIRECT_BYTES:
        return None
    transport = request.transport
    if transport is None or transport.is_closing():
        return None
    answer = JsonAnswer(body)
    keep_alive = answer._keep_alive = request.keep_alive  # as `prepare` would set them
    version = answer._version = request.version
    if keep_alive and version == HttpVersion11:  # `_bytes` of a 200 with no extra header, not a HEAD's
        transport.write(b"".join((_OK_JSON_11, b"%d\r\n" % len(body), _date(), _SERVER_END, body)))
    else:
        transport.write(answer._whole())
    answer._eof_sent = True  # `prepare` and `write_eof` do nothing more
    answer._body_length = len(body)
    return answer


def json_answer(body: bytes, status: int = 200, headers: dict[str, str] | None = None) -> web.StreamResponse:
    """A JSON answer, built from its bytes (`JsonAnswer`)."""
    return JsonAnswer(body, status, headers)


def event(frame: bytes) -> bytes:
    return b"event: message\ndata: " + frame.rstrip(b"\n") + b"\n\n"


def body_at_hand(request: web.Request, cap: int) -> bytes | None:
    """The whole body when it came with the headers and is within `cap` (no wait, no
    timer, no coroutine); None when `read_body` must read it (or refuse it).

    A small body that came in one piece is taken from the reader's buffer as it lies:
    `read_nowait` would also ask the connection to resume reading (a parse of nothing
    and a transport call, about 200 bytecodes a request), which a reader never past its
    low-water mark never paused. The reader is left as it is; nothing reads it again."""
    content = request.content
    if type(content) is StreamReader and content._eof and content._exception is None:
        chunks = content._buffer
        if len(chunks) == 1 and content._size == content.total_bytes <= content._low_water and content._size <= cap:
            return chunks[0]
    if content.is_eof() and content.total_bytes <= cap:
        return content.read_nowait()
    return None


async def read_body(request: web.Request, cap: int, seconds: float) -> bytes:
    """The whole body, at most `cap` bytes (else TooLarge), within `seconds` (else TimeoutError)."""
    length = request.headers.get("Content-Length")  # digits only: aiohttp's parser refused any other
    if length is not None and int(length) > cap:
        raise TooLarge
    at_hand = body_at_hand(request, cap)
    if at_hand is not None:
        return at_hand
    content = request.content
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
        sent = exchange.sent
        if sent is not None:
            return sent  # type: ignore[return-value]  # written by `early_writer`'s, from the answer's callback
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
