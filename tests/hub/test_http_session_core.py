"""An HTTP engine session over the in-memory core, without sockets: the session object the
HTTP front builds for each engine, fed frames as its POST routes would, over fake upstreams.
What the upstreams cause lands where `HttpSession.deliver` says: an answer in the POST that
asked, progress in the POST whose request carries the token, upstream requests and log
messages in the newest POST still streaming, the rest on the GET stream; and a POST whose
client hung up has its call cancelled upstream."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sidecar.front.http.sessions import Exchange, HttpSession
from sidecar.redact import Redactor
from sidecar.wire.outbox import FrameQueue
from tests.harness import FakeServer, InMemorySidecar, in_memory, tool

WAIT = 5.0
Frame = dict[str, Any]


async def _next(queue: FrameQueue) -> Frame | None:
    """The next frame on `queue` (None: the exchange ended), waiting a bounded time."""
    async with asyncio.timeout(WAIT):
        frame = await queue.get()
    return json.loads(frame) if frame else None


async def _all(queue: FrameQueue) -> list[Frame]:
    """Every frame of an exchange up to its end."""
    frames = []
    while (frame := await _next(queue)) is not None:
        frames.append(frame)
    return frames


def _held(queue: FrameQueue) -> list[Frame]:
    """What waits on `queue` now, taken off it."""
    frames = []
    while len(queue):
        frame = queue.get_nowait()
        if frame:
            frames.append(json.loads(frame))
    return frames


class HttpEngine:
    """One HTTP session: each `post` is one POST's exchange, as the routes begin it."""

    def __init__(self, sidecar: InMemorySidecar) -> None:
        self.session = HttpSession(sidecar.face, Redactor(sidecar.config.secrets()), "s-1")
        sidecar.face.sessions.append(self.session.engine)

    def post(self, frame: Frame, streaming: bool = True) -> Exchange:
        params = frame.get("params") or {}
        meta = params.get("_meta") if isinstance(params, dict) else None
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        ids = [frame["id"]] if "id" in frame and "method" in frame else []
        exchange = self.session.begin(ids, [token])
        exchange.streaming = streaming
        self.session.dispatcher.feed(json.dumps(frame).encode())
        return exchange

    async def initialize(self) -> None:
        exchange = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                              "params": {"protocolVersion": "2025-06-18", "capabilities": {"sampling": {}},
                                         "clientInfo": {"name": "http-harness", "version": "0"}}}, streaming=False)
        [answer] = await _all(exchange.frames)
        assert answer["result"]["serverInfo"]["name"] == "omb-sidecar"
        self.session.end(exchange)


def _call(ident: str, name: str, token: str | None = None) -> Frame:
    params: Frame = {"name": name, "arguments": {}}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}


@asynccontextmanager
async def _http_engine() -> AsyncIterator[tuple[InMemorySidecar, HttpEngine]]:
    async with in_memory({"f": FakeServer([tool("work")], resources=[{"uri": "mem://doc", "name": "doc"}])}) as sidecar:
        await sidecar.settled()
        engine = HttpEngine(sidecar)
        await engine.initialize()
        try:
            yield sidecar, engine
        finally:
            await engine.session.close()


async def test_each_frame_lands_in_the_post_or_stream_it_belongs_to() -> None:
    async with _http_engine() as (sidecar, engine):
        stream = engine.session.open_stream()
        assert stream is not None
        upstream = sidecar.upstream("f")
        first = engine.post(_call("a", "f__work", token="tok-a"))
        call_a = await upstream.expect_call("work")
        second = engine.post(_call("b", "f__work"))
        call_b = await upstream.expect_call("work")
        call_a.progress(1, 2)  # to the POST whose request carries the token, though not the newest
        upstream.notify("notifications/message", {"level": "info", "data": "log"})  # the newest POST streaming
        engine.session.engine.resource_uris.add("mem://doc")  # as its resources/subscribe leaves it
        upstream.notify("notifications/resources/updated", {"uri": "mem://doc"})  # the GET stream
        asked = asyncio.create_task(call_b.ask("sampling/createMessage", {"messages": [], "maxTokens": 1}))
        streamed = [await _next(second.frames), await _next(second.frames)]
        assert [f and f["method"] for f in streamed] == ["notifications/message", "sampling/createMessage"]
        call_a.answer("a done")
        call_b.answer("b done")
        a_frames = await _all(first.frames)
        assert [(f.get("method"), f.get("id")) for f in a_frames] == [("notifications/progress", None), (None, "a")]
        assert a_frames[0]["params"]["progressToken"] == "tok-a"
        assert a_frames[1]["result"]["content"][0]["text"] == "a done"
        b_rest = await _all(second.frames)
        assert [(f.get("method"), f.get("id")) for f in b_rest] == [(None, "b")]
        assert [f["method"] for f in _held(stream)] == ["notifications/resources/updated"]
        assert not asked.done()  # unanswered by this engine: the fake stops waiting
        asked.cancel()
        await asyncio.wait([asked])


async def test_an_upstreams_request_and_log_go_to_the_newest_streaming_post_in_order() -> None:
    async with _http_engine() as (sidecar, engine):
        upstream = sidecar.upstream("f")
        post = engine.post(_call("a", "f__work"))
        call = await upstream.expect_call("work")
        upstream.notify("notifications/message", {"level": "info", "data": "log"})
        asked = asyncio.create_task(call.ask("sampling/createMessage", {"messages": [], "maxTokens": 1}))
        message, relayed = await _next(post.frames), await _next(post.frames)
        assert message is not None and message["method"] == "notifications/message"
        assert relayed is not None and relayed["method"] == "sampling/createMessage"
        reply = engine.post({"jsonrpc": "2.0", "id": relayed["id"],
                             "result": {"role": "assistant", "content": {"type": "text", "text": "s"}, "model": "m"}})
        assert reply.waiting == set()  # a POST of answers only waits for nothing
        assert (await asked)["result"]["model"] == "m"
        call.answer("done")
        assert [f.get("id") for f in await _all(post.frames)] == ["a"]


async def test_without_a_streaming_post_everything_but_answers_goes_to_the_get_stream() -> None:
    async with _http_engine() as (sidecar, engine):
        stream = engine.session.open_stream()
        assert stream is not None
        upstream = sidecar.upstream("f")
        post = engine.post(_call("a", "f__work", token="tok-a"), streaming=False)
        call = await upstream.expect_call("work")
        upstream.notify("notifications/message", {"level": "info", "data": "log"})
        call.answer("done")
        assert [f.get("id") for f in await _all(post.frames)] == ["a"]
        assert [f["method"] for f in _held(stream)] == ["notifications/message"]


async def test_a_post_whose_client_hung_up_has_its_call_cancelled_and_gets_no_answer() -> None:
    async with _http_engine() as (sidecar, engine):
        stream = engine.session.open_stream()
        assert stream is not None
        upstream = sidecar.upstream("f")
        post = engine.post(_call("a", "f__work"))
        call = await upstream.expect_call("work")
        engine.session.end(post)  # the client went away before its answer
        assert await call.until_cancelled() == "cancelled by the client"
        call.answer("too late")
        await upstream.sync()
        assert _held(stream) == [] and engine.session.in_flight == 0


async def test_a_session_closed_with_a_call_in_flight_has_the_call_cancelled_upstream() -> None:
    """A DELETE, or the session expiring idle-but-busy: the work it asked for stops too."""
    async with _http_engine() as (sidecar, engine):
        upstream = sidecar.upstream("f")
        engine.post(_call("a", "f__work"))
        call = await upstream.expect_call("work")
        await engine.session.close()
        assert await call.until_cancelled() is not None
        conn = sidecar.face.pool.get("f").connection  # type: ignore[union-attr]
        assert conn is not None and conn.in_flight == 0


async def test_a_get_stream_nobody_reads_refuses_upstream_requests_and_keeps_answers() -> None:
    """No streaming POST: what is not an answer waits on the GET stream, which nobody opened.
    Past its small bound, an upstream's request is refused to it; the POST's answer still comes."""
    async with _http_engine() as (sidecar, engine):
        upstream = sidecar.upstream("f")
        post = engine.post(_call("a", "f__work"), streaming=False)
        call = await upstream.expect_call("work")
        for n in range(4):  # each ~100 KB, past the unopened stream's 256 KB
            engine.session.engine.resource_uris.add(f"mem://doc/{n}?" + "x" * 100_000)  # as a subscribe leaves it
            upstream.notify("notifications/resources/updated", {"uri": f"mem://doc/{n}?" + "x" * 100_000})
        refused = await call.ask("sampling/createMessage", {"messages": [], "maxTokens": 1})
        assert refused["error"] == {"code": -32603, "message": "the client is not reading what it is sent: "
                                                              "sampling/createMessage refused"}
        call.answer("answered all the same")
        [answer] = await _all(post.frames)
        assert answer["result"]["content"][0]["text"] == "answered all the same"
        held = _held(engine.session.stream)
        assert [f["method"] for f in held] == ["notifications/resources/updated"] * 3  # the fourth was dropped
        assert engine.session.stream.shedding.dropped == {"notifications/resources/updated": 1, "request": 1}
