"""The HTTP front's cheaper request path keeps its promises: every path is admitted before
it is answered (no middleware on `/mcp`), a POST's one answer waits in a slot while
anything more makes the event stream, and a stateless request's session is reused only
when its last request left nothing in it, so no request hears another's frames.

The real front on loopback over an in-memory sidecar (`tests.harness`), for the path and
reuse cases; the exchange on its own for its ordering."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from sidecar.front.http.listener import FrontSettings
from sidecar.front.http.routes import HttpFront
from sidecar.front.http.sessions import IDLE_TRANSIENTS, Exchange
from sidecar.redact import Redactor
from tests.eras.eras_support import modern_headers
from tests.harness import FakeServer, InMemorySidecar, in_memory, tool
from tests.http.http_support import served_front

pytestmark = pytest.mark.timeout(60)

TOKEN = "reuse-token-0123456789abcdef"
OTHER = "reuse-other-token-9876543210"
MODERN = "2026-07-28"


@asynccontextmanager
async def served() -> AsyncIterator[tuple[InMemorySidecar, HttpFront, str]]:
    async with in_memory({"f": FakeServer([tool("echo", text={"type": "string"})])}) as sidecar:
        await sidecar.settled()
        settings = FrontSettings(host="127.0.0.1", port=0, token=TOKEN, more_tokens=(OTHER,), body_cap=64 * 1024)
        async with served_front(sidecar.face, settings) as (front, site):
            yield sidecar, front, str(site.make_url("/"))


def call_body(ident: int, text: str, token: str | None = None) -> bytes:
    meta: dict[str, Any] = {"io.modelcontextprotocol/protocolVersion": MODERN,
                            "io.modelcontextprotocol/clientCapabilities": {}}
    if token is not None:
        meta["progressToken"] = token
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                       "params": {"name": "f__echo", "arguments": {"text": text}, "_meta": meta}}).encode()


PATHS = ("/health", "/metrics", "/mcp", "/mcp/", "/mcp/{face}", "/mcp/another-face", "/mcp/a/b", "/nowhere",
         "/health/", "/MCP")
METHODS = ("GET", "HEAD", "POST", "DELETE", "PUT", "PATCH", "OPTIONS")
CALLERS = ("no token", "token", "foreign Host", "foreign Origin")
MCP_METHODS = "DELETE,GET,HEAD,POST"


def expected(method: str, path: str, caller: str, face: str) -> tuple[int, str | None]:
    """The status (and `Allow`) each request gets, as the front with its admission
    middleware answered them: Host and Origin first, everywhere; `/health` open; every
    other path needs the token before its 404 or 405; then the route's own refusal of an
    empty request."""
    if caller.startswith("foreign"):
        return 403, None
    if path == "/health":
        return (200, None) if method in ("GET", "HEAD") else (405, "GET,HEAD")
    if caller == "no token":
        return 401, None
    ours = path in ("/mcp", f"/mcp/{face}")
    another = path.startswith("/mcp/") and path.count("/") == 2 and not ours and path != "/mcp/"
    if not (ours or another):
        return 404, None
    if method not in ("GET", "HEAD", "POST", "DELETE"):
        return 405, MCP_METHODS
    if another:
        return 404, None  # no such face
    return {"GET": 400, "HEAD": 400, "POST": 415, "DELETE": 404}[method], None  # no session; no JSON body


async def test_every_path_and_method_is_admitted_then_answered_as_before() -> None:
    async with served() as (sidecar, _, base), aiohttp.ClientSession() as http:
        face = sidecar.face.name
        for path, method, caller in itertools.product(PATHS, METHODS, CALLERS):
            headers = {"Authorization": f"Bearer {TOKEN}"} if caller != "no token" else {}
            if caller == "foreign Host":
                headers["Host"] = "evil.example.com"
            if caller == "foreign Origin":
                headers["Origin"] = "http://evil.example.com"
            url = base + path.format(face=face).lstrip("/")
            async with http.request(method, url, headers=headers) as answer:
                await answer.read()
                got = (answer.status, answer.headers.get("Allow"))
            assert got == expected(method, path.format(face=face), caller, face), (method, path, caller)
        bad = {"Authorization": "Bearer not-the-token-at-all-0000"}
        async with http.post(base + "mcp", headers=bad) as answer:
            assert answer.status == 401


async def post_stateless(http: aiohttp.ClientSession, base: str, body: bytes, token: str = TOKEN) -> tuple[str, bytes]:
    headers = modern_headers(token, "f__echo")
    async with http.post(base + "mcp", data=body, headers=headers) as answer:
        assert answer.status == 200
        return answer.content_type, await answer.read()


async def test_a_reused_stateless_session_hears_nothing_of_an_earlier_request() -> None:
    async with served() as (sidecar, front, base), aiohttp.ClientSession() as http:
        upstream = sidecar.upstream("f")
        # A first caller's call, its client gone before the answer: its session is not clean.
        abandoned = asyncio.create_task(post_stateless(http, base, call_body(1, "first", "tok")))
        first = await upstream.expect_call("echo")
        abandoned.cancel()
        await asyncio.gather(abandoned, return_exceptions=True)
        # A second caller, same id and progress token, while the first call's upstream still talks.
        second_post = asyncio.create_task(post_stateless(http, base, call_body(1, "second", "tok"), OTHER))
        second = await upstream.expect_call("echo")
        first.progress(0.5, message="first's progress")
        first.answer("first's answer")
        second.progress(0.25, message="second's progress")
        second.answer("second's answer")
        kind, body = await second_post
        assert b"second's answer" in body and b"second's progress" in body, body
        assert b"first" not in body, body
        assert kind == "text/event-stream"


async def test_sequential_stateless_calls_reuse_one_session_and_each_gets_its_own_answer() -> None:
    async with served() as (sidecar, front, base), aiohttp.ClientSession() as http:
        upstream = sidecar.upstream("f")
        upstream.on_call = lambda call: call.answer(f"echo {call.arguments['text']}")
        for i in range(40):
            kind, body = await post_stateless(http, base, call_body(7, f"n{i}"), TOKEN if i % 2 else OTHER)
            answer = json.loads(body)
            assert kind == "application/json"
            assert answer["id"] == 7 and answer["result"]["content"][0]["text"] == f"echo n{i}"
            assert answer["result"]["resultType"] == "complete"
        assert len(front.table._idle) == 1 and not front.table.passing
        # Many at once: each its own answer; the idle sessions kept stay bounded.
        bodies = await asyncio.gather(*(post_stateless(http, base, call_body(1, f"c{i}")) for i in range(40)))
        assert sorted(json.loads(b)["result"]["content"][0]["text"] for _, b in bodies) == \
            sorted(f"echo c{i}" for i in range(40))
        assert 1 <= len(front.table._idle) <= IDLE_TRANSIENTS and not front.table.passing


async def test_an_exchange_answers_alone_or_streams_everything_in_order() -> None:
    alone = Exchange([1], [None])
    waiting = asyncio.create_task(alone.settled())
    await asyncio.sleep(0)  # the waiter is parked before the answer comes
    alone.put(b"answer")
    alone.answered(1)
    assert await waiting == b"answer"

    mixed = Exchange([1], ["tok"])
    mixed.put(b"progress")  # a first frame, then more: a stream
    mixed.frames.offer(b"more progress", "notifications/progress")
    mixed.put(b"answer")
    mixed.answered(1)
    assert await mixed.settled() is None
    assert [await mixed.frames.get() for _ in range(4)] == [b"progress", b"more progress", b"answer", None]

    unanswered = Exchange([1], [None])
    unanswered.end()  # its session closed
    assert await unanswered.settled() is None
    assert await unanswered.frames.get() is None

    late_stream = Exchange([1], [None])
    late_stream.put(b"answer")
    late_stream.answered(1)
    assert [await late_stream.frames.get() for _ in range(2)] == [b"answer", None]  # the queue holds what came


async def test_a_post_body_is_judged_by_its_type_and_length_as_before() -> None:
    async with served() as (sidecar, front, base), aiohttp.ClientSession() as http:
        sidecar.upstream("f").on_call = lambda call: call.answer("ok")

        async def post(body: bytes, **headers: str) -> int:
            sent = {**modern_headers(TOKEN, "f__echo"), **headers}
            async with http.post(base + "mcp", data=body, headers=sent) as answer:
                await answer.read()
                return answer.status

        assert await post(call_body(1, "x"), **{"Content-Type": "application/json; charset=utf-8"}) == 200
        assert await post(call_body(1, "x"), **{"Content-Type": "text/plain"}) == 415
        assert await post(call_body(1, "x"), **{"Content-Type": "application/jsonx"}) == 415
        cap = front.settings.body_cap
        assert await post(call_body(1, "x" * cap)) == 413  # its Content-Length says so before it is read


async def test_a_front_mounted_under_a_gateway_path_keeps_its_health_behind_its_token() -> None:
    async with in_memory({"f": FakeServer([tool("echo")])}) as sidecar:
        await sidecar.settled()
        front = HttpFront(sidecar.face, Redactor([]), FrontSettings(host="127.0.0.1", port=0, token=TOKEN))
        root = web.Application()
        root.add_subapp("/bots/b/", front.app())  # as the gateway mounts each bot's front
        site = TestServer(root, host="127.0.0.1", port=0)
        await site.start_server()
        try:
            async with aiohttp.ClientSession() as http:
                async def status(method: str, path: str, token: str | None) -> int:
                    headers = {"Authorization": f"Bearer {token}"} if token else {}
                    async with http.request(method, str(site.make_url(path)), headers=headers) as answer:
                        return answer.status

                assert await status("GET", "/bots/b/health", None) == 401  # only the top `/health` is open
                assert await status("GET", "/bots/b/health", TOKEN) == 200
                assert await status("GET", "/bots/b/nowhere", None) == 401
                assert await status("GET", "/bots/b/nowhere", TOKEN) == 404
                assert await status("PUT", "/bots/b/mcp", TOKEN) == 405
                assert await status("POST", "/bots/b/mcp", TOKEN) == 415
        finally:
            await front.table.close_all()
            await site.close()
