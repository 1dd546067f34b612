"""The HTTP front's lean way, held to what it replaced, over real HTTP on 127.0.0.1.

A plain `tools/call` runs with no task of its own (`Gate.start`) in an `Mcp-Session-Id`
session and as a stateless 2026-07-28 request whose `_meta` is its envelope alone; one
with a progress token or the tasks extension declared still takes a task. A JSON answer
is written whole (`JsonAnswer`): its status line follows the request's HTTP version, its
`Connection` header what aiohttp would set, a HEAD gets the length and no body, and a
header value with a line break is refused. `POST /mcp` through the listener's hot route
still honours `Expect: 100-continue` (the application answers it first). A call's result
is written from the callback that brought it (`early_writer`), with the same bytes, the
connection kept or closed as asked, pipelined answers in order; an error, a stream or an
exchange with a second frame is left to the handler.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import pytest

from sidecar.front.http.answers import JsonAnswer
from sidecar.front.http.exchange import Exchange
from sidecar.front.http.listener import FrontSettings, Listener
from sidecar.front.http.routes import HttpFront
from sidecar.front.http.sessions import HttpSession
from sidecar.redact import Redactor
from tests.eras.eras_support import modern_headers
from tests.harness import FakeServer, echo, in_memory, tool
from tests.http.http_support import served_front

pytestmark = pytest.mark.timeout(60)

TOKEN = "lean-token-0123456789abcdef"
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
TASKS_DECLARED = {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": {
    "extensions": {"io.modelcontextprotocol/tasks": {}}}}


def _call(ident: int, meta: dict[str, Any] | None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "f__echo", "arguments": {"text": "hi"}}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}


def _ways(session: HttpSession) -> tuple[int, int]:
    """(tasks, futures held) still running in the session's jobs."""
    running = [job for job in session.jobs._running if not job.done()]
    tasks = sum(isinstance(job, asyncio.Task) for job in running)
    return tasks, len(running) - tasks


@asynccontextmanager
async def _front() -> AsyncIterator[tuple[FakeServer, HttpFront, str]]:
    server = FakeServer([tool("echo")])
    async with in_memory({"f": server}) as sidecar:
        await sidecar.settled()
        async with served_front(sidecar.face, FrontSettings(host="127.0.0.1", port=0, token=TOKEN)) as (front, site):
            yield server, front, str(site.make_url("/mcp"))


async def _stateless_way(meta: dict[str, Any]) -> tuple[int, int]:
    async with _front() as (server, front, url), aiohttp.ClientSession() as http:
        posted = asyncio.ensure_future(http.post(url, json=_call(7, meta), headers=modern_headers(TOKEN, "f__echo")))
        call = await server.expect_call("echo")
        (session,) = front.table.passing
        ways = _ways(session)
        call.answer("echoed")
        async with await posted as answer:
            body = await answer.json()
        assert answer.status == 200 and body["id"] == 7
        assert body["result"]["content"][0]["text"] == "echoed" and body["result"]["resultType"] == "complete"
        return ways


async def test_a_stateless_call_with_its_envelope_alone_runs_with_no_task() -> None:
    assert await _stateless_way(ENVELOPE) == (0, 1)


@pytest.mark.parametrize("meta", [{**ENVELOPE, "progressToken": "p1"}, TASKS_DECLARED],
                         ids=["progress token", "tasks extension"])
async def test_a_stateless_call_with_more_than_its_envelope_takes_a_task(meta: dict[str, Any]) -> None:
    assert await _stateless_way(meta) == (1, 0)


async def test_a_stateless_call_whose_engine_declares_questions_is_held_with_no_task() -> None:
    """An engine that declares elicitation and roots: its call is held (a question could
    come), and its plain call still goes upstream with no task; the held call leaves
    nothing running once answered."""
    asking = {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "roots": {}}}
    async with _front() as (server, front, url), aiohttp.ClientSession() as http:
        posted = asyncio.ensure_future(http.post(url, json=_call(9, asking), headers=modern_headers(TOKEN, "f__echo")))
        call = await server.expect_call("echo")
        assert not front.table.passing  # not a transient session: a held call
        (held,) = front.held.running
        running = [job for job in held.jobs._running if not job.done()]
        assert len(running) == 1 and not isinstance(running[0], asyncio.Task)
        call.answer("echoed")
        async with await posted as answer:
            body = await answer.json()
        assert answer.status == 200 and body["result"]["content"][0]["text"] == "echoed"
        assert body["result"]["resultType"] == "complete"
        assert not front.held.running and held.over and held.jobs._closed  # closed at once, no task left


async def test_a_session_call_runs_with_no_task() -> None:
    async with _front() as (server, front, url), aiohttp.ClientSession() as http:
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
        headers = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream"}
        async with http.post(url, json=hello, headers=headers) as answer:
            assert answer.status == 200
            headers["Mcp-Session-Id"] = answer.headers["Mcp-Session-Id"]
        posted = asyncio.ensure_future(http.post(url, json=_call(2, None), headers=headers))
        call = await server.expect_call("echo")
        (session,) = front.table.sessions.values()
        assert _ways(session) == (0, 1)
        call.answer("echoed")
        async with await posted as answer:
            assert (await answer.json())["result"]["content"][0]["text"] == "echoed"


# -- the answer's bytes, through the listener (its hot route) ----------------------------


@asynccontextmanager
async def _listening() -> AsyncIterator[int]:
    async with in_memory({"f": FakeServer([tool("echo")], on_call=echo)}) as sidecar:
        await sidecar.settled()
        settings = FrontSettings(host="127.0.0.1", port=0, token=TOKEN)
        front = HttpFront(sidecar.face, Redactor([]), settings)
        listener = Listener(front.app(), settings, front.hot)
        port = await listener.start()
        try:
            yield port
        finally:
            await front.table.close_all()
            await listener.close()


async def _exchange(port: int, request: bytes, then: bytes = b"") -> bytes:
    """The bytes the front sends back for `request` (and `then`, sent once an interim
    answer came), until it closes or a second passes quietly."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        got = b""
        if then:
            got += await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
            writer.write(then)
        while True:
            try:
                chunk = await asyncio.wait_for(reader.read(65536), 1.0)
            except TimeoutError:
                return got
            if not chunk:
                return got
            got += chunk
    finally:
        writer.close()


def _head_and_body(raw: bytes) -> tuple[list[str], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    return head.decode("latin-1").split("\r\n"), body


def _post(version: str, body: bytes, *lines: str) -> bytes:
    head = [f"POST /mcp HTTP/{version}", "Host: 127.0.0.1", "Content-Type: application/json",
            f"Content-Length: {len(body)}", *lines]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


UNKNOWN_SESSION = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'


async def test_a_json_answer_follows_the_version_and_connection_of_its_request() -> None:
    async with _listening() as port:
        bearer = f"Authorization: Bearer {TOKEN}"
        # HTTP/1.1, kept alive: no Connection header; the length is the body's.
        lines, body = _head_and_body(await _exchange(port, _post("1.1", UNKNOWN_SESSION, bearer)))
        assert lines[0] == "HTTP/1.1 400 Bad Request"
        assert "Content-Type: application/json" in lines and f"Content-Length: {len(body)}" in lines
        assert any(line.startswith("Date: ") for line in lines) and any(line.startswith("Server: ") for line in lines)
        assert not any(line.startswith("Connection:") for line in lines)
        assert b"Mcp-Session-Id header is required" in body
        # HTTP/1.1 asking to close: told so.
        lines, _ = _head_and_body(await _exchange(port, _post("1.1", UNKNOWN_SESSION, bearer, "Connection: close")))
        assert "Connection: close" in lines
        # HTTP/1.0: its own version on the status line; kept alive only when asked.
        lines, _ = _head_and_body(await _exchange(port, _post("1.0", UNKNOWN_SESSION, bearer)))
        assert lines[0] == "HTTP/1.0 400 Bad Request" and not any(line.startswith("Connection:") for line in lines)
        lines, _ = _head_and_body(await _exchange(port, _post("1.0", UNKNOWN_SESSION, bearer,
                                                                 "Connection: keep-alive")))
        assert lines[0] == "HTTP/1.0 400 Bad Request" and "Connection: keep-alive" in lines


async def test_a_refusal_to_a_head_request_says_its_length_and_sends_no_body() -> None:
    async with _listening() as port:
        lines, body = _head_and_body(await _exchange(port, b"HEAD /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
        assert lines[0] == "HTTP/1.1 401 Unauthorized" and "WWW-Authenticate: Bearer" in lines
        length = next(int(line.split(": ")[1]) for line in lines if line.startswith("Content-Length: "))
        assert length > 0 and body == b""


async def test_a_post_asking_expect_continue_is_told_to_continue_then_answered() -> None:
    async with _listening() as port:
        head = _post("1.1", b"", f"Authorization: Bearer {TOKEN}", "Expect: 100-continue")
        raw = await _exchange(port, head.replace(b"Content-Length: 0", f"Content-Length: {len(UNKNOWN_SESSION)}".encode()),
                              UNKNOWN_SESSION)
        assert raw.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 400 Bad Request\r\n")
        assert b"Mcp-Session-Id header is required" in raw


def test_a_header_value_with_a_line_break_is_refused() -> None:
    with pytest.raises(ValueError):
        JsonAnswer(b"{}", 200, {"Mcp-Session-Id": "x\r\nSet-Cookie: a=b"})


# -- a call's result, written from the callback that brought it ---------------------------


def _stateless_post(version: str, ident: int, *lines: str) -> bytes:
    body = json.dumps(_call(ident, ENVELOPE)).encode()
    modern = [f"{name}: {value}" for name, value in modern_headers(TOKEN, "f__echo").items() if name != "Content-Type"]
    return _post(version, body, *modern, *lines)


def _answers(raw: bytes) -> list[tuple[list[str], dict[str, Any]]]:
    """Each answer on the connection: its head's lines and its JSON body, in order."""
    found = []
    while raw:
        head, _, rest = raw.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        length = next(int(line.split(": ")[1]) for line in lines if line.startswith("Content-Length: "))
        found.append((lines, json.loads(rest[:length])))
        raw = rest[length:]
    return found


async def test_a_result_written_early_keeps_or_closes_the_connection_as_asked() -> None:
    async with _listening() as port:
        ((lines, body),) = _answers(await _exchange(port, _stateless_post("1.1", 3)))
        assert lines[0] == "HTTP/1.1 200 OK" and not any(line.startswith("Connection:") for line in lines)
        assert "Content-Type: application/json" in lines and any(line.startswith("Date: ") for line in lines)
        assert body["id"] == 3 and body["result"]["content"][0]["text"] == "hi"
        assert body["result"]["resultType"] == "complete"
        ((lines, _),) = _answers(await _exchange(port, _stateless_post("1.1", 4, "Connection: close")))
        assert "Connection: close" in lines
        ((lines, _),) = _answers(await _exchange(port, _stateless_post("1.0", 5)))  # closed after: one answer
        assert lines[0] == "HTTP/1.0 200 OK" and not any(line.startswith("Connection:") for line in lines)
        ((lines, _),) = _answers(await _exchange(port, _stateless_post("1.0", 6, "Connection: keep-alive")))
        assert "Connection: keep-alive" in lines


async def test_pipelined_calls_are_answered_in_their_order() -> None:
    async with _listening() as port:
        raw = await _exchange(port, b"".join(_stateless_post("1.1", n) for n in (11, 12, 13)))
        assert [body["id"] for _, body in _answers(raw)] == [11, 12, 13]


def test_only_a_lone_result_is_written_early() -> None:
    written: list[bytes] = []

    def early(frame: bytes) -> object:
        written.append(frame)
        return "sent"

    alone = Exchange([1], [None])
    alone.early = early
    alone.answer(b"result", 1)
    assert written == [b"result"] and alone.sent == "sent"
    failed = Exchange([2], [None])
    failed.early = early
    failed.answer(b"error", 2, -32602)  # an error's status is the handler's to choose
    assert written == [b"result"] and failed.sent is None
    streamed = Exchange([3], ["tok"])
    streamed.early = early
    streamed.streaming = True
    streamed.put(b"progress")
    streamed.answer(b"result", 3)  # the second frame: an event stream, the handler's
    assert written == [b"result"] and streamed.sent is None
