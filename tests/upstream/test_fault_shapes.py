"""One shape for every upstream fault, whatever carried it (issue 23, the upstream seam).

Generated over fault kind x transport, against REAL upstreams: a stdio child that exits,
is killed, writes a line over its cap or never answers; a Streamable HTTP server (one
JSON body) and a legacy SSE server on 127.0.0.1 that answer 500 or 401, drop the
connection and stop listening, send a body over the cap, or stall. The engine side is
the in-memory harness over the real transports (`over_real_upstreams`). Each `tools/call`
must end in the same shape for its kind: an `isError` result whose text opens with the
kind's label and the server's name, and says the call was not retried.
"""

from __future__ import annotations

import os
import re
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from hostile_http import serve_hostile

from sidecar.errors import FAULT_KINDS, SignInNeeded, TimedOut, TooLarge, UpstreamUnavailable
from tests.harness import FakeEngine, FakeServer, InMemorySidecar, in_memory, over_real_upstreams, text_of, tool

pytestmark = pytest.mark.timeout(60)

FAULT_SERVER = Path(__file__).resolve().parents[1] / "upstreams" / "fault_server.py"
CAP = 65_536
DEADLINE = 1.0
ENTRY = {"maxMessageBytes": CAP, "callDeadlineSeconds": DEADLINE, "startTimeoutSeconds": 20, "pinning": "off"}
Fault = type[UpstreamUnavailable]

# (transport, fault, kind): every fault each transport can show, and the kind it must be
CASES: list[tuple[str, str, Fault]] = [
    ("stdio", "exits", UpstreamUnavailable),
    ("stdio", "is killed", UpstreamUnavailable),
    ("stdio", "too-large line", TooLarge),
    ("stdio", "never answers", TimedOut),
    *[(transport, fault, kind) for transport in ("http", "sse") for fault, kind in [
        ("HTTP 500", UpstreamUnavailable),
        ("HTTP 401, no sign-in", UpstreamUnavailable),
        ("connection refused", UpstreamUnavailable),
        ("too-large body", TooLarge),
        ("stalled body", TimedOut),
    ]],
]


def shape(answer: dict[str, Any]) -> tuple[bool, str]:
    """What the engine got, as (is an isError tool result, its text)."""
    result = answer.get("result")
    return (isinstance(result, dict) and result.get("isError") is True and "error" not in answer), text_of(answer)


@asynccontextmanager
async def upstream(transport: str) -> AsyncIterator[dict[str, Any]]:
    """The mcpServers entry of a real upstream of this transport, served while the test runs."""
    if transport == "stdio":
        yield {"command": sys.executable, "args": [str(FAULT_SERVER)], **ENTRY}
        return
    async with serve_hostile() as web:
        yield {"type": transport, "url": web.sse_url if transport == "sse" else web.http_url, **ENTRY}


async def stdio_fault(engine: FakeEngine, fault: str) -> dict[str, Any]:
    if fault == "exits":
        return await engine.call_and_wait("u__crash", {"code": 3})
    if fault == "too-large line":
        return await engine.call_and_wait("u__big", {"bytes": 3 * CAP})
    if fault == "never answers":
        return await engine.call_and_wait("u__hang")
    pid = int(text_of(await engine.call_and_wait("u__pid")))
    waiting = engine.call("u__hang")
    await engine.call_and_wait("u__echo", {"nonce": "the hang is in"})  # answered after the hang was read
    os.kill(pid, signal.SIGKILL)
    return await engine.answer_to(waiting)


WEB_FAULTS: dict[str, dict[str, Any]] = {
    "HTTP 500": {"lines": ["not JSON-RPC"], "status": 500},
    "HTTP 401, no sign-in": {"lines": ["no"], "status": 401},
    "connection refused": {"vanish": True},
    "too-large body": {"lines": ['{"jsonrpc":"2.0","id":{id},"result":{"content":[{"type":"text","text":"%s"}]}}'
                                 % ("p" * 2 * CAP)]},
    "stalled body": {"stall": True},
}


async def web_fault(engine: FakeEngine, fault: str) -> dict[str, Any]:
    return await engine.call_and_wait("u__say", WEB_FAULTS[fault])


async def caused(sidecar: InMemorySidecar, transport: str, fault: str) -> dict[str, Any]:
    engine = await sidecar.engine()
    await sidecar.state_of("u", "ready")
    cause: Callable[[FakeEngine, str], Any] = stdio_fault if transport == "stdio" else web_fault
    answer: dict[str, Any] = await cause(engine, fault)
    return answer


@pytest.mark.parametrize(("transport", "fault", "kind"), CASES, ids=[f"{t}-{f}" for t, f, _ in CASES])
async def test_every_fault_reaches_the_engine_in_its_kinds_one_shape(transport: str, fault: str, kind: Fault) -> None:
    async with upstream(transport) as entry, over_real_upstreams({"mcpServers": {"u": entry}}) as sidecar:
        is_tool_error, text = shape(await caused(sidecar, transport, fault))
    assert is_tool_error, (transport, fault, text)
    assert re.fullmatch(rf"{kind.label}: upstream 'u' \S.*; the call was not retried", text, re.S), (transport, fault, text)
    assert not any(text.startswith(other.label) for other in (UpstreamUnavailable, TooLarge, TimedOut) if other is not kind)
    if fault.startswith("HTTP"):
        assert f"HTTP {fault[5:8]}" in text  # the status is named, never made into a JSON-RPC error


# -- in memory: every kind, sign-in included, through the seam a transport reports to ----

KINDS: list[Fault] = list(FAULT_KINDS)


@pytest.mark.parametrize("kind", KINDS, ids=[k.label for k in KINDS])
async def test_a_fault_is_a_tool_error_for_a_call_and_an_error_with_the_same_words_otherwise(kind: Fault) -> None:
    server = FakeServer([tool("work")], prompts=[{"name": "greet"}], answers={"prompts/get": lambda p: {"messages": []}})
    server.faults = {"tools/call": kind("went wrong here"), "prompts/get": kind("went wrong here")}
    async with in_memory({"f": server}) as sidecar:
        engine = await sidecar.engine()
        called = await engine.call_and_wait("f__work")
        asked = await engine.answer_to(engine.request("prompts/get", {"name": "f__greet"}))
    said = f"{kind.label}: upstream 'f' went wrong here"
    assert shape(called) == (True, f"{said}; the call was not retried")
    assert asked["error"] == {"code": UpstreamUnavailable.code, "message": said}


async def test_sign_in_is_decided_by_the_faults_kind_never_by_its_words() -> None:
    words = "refused to renew the sign-in: a person must run `omb-sidecar signin s`"
    async with in_memory({"s": FakeServer([tool("echo")]), "u": FakeServer([tool("echo")])}) as sidecar:
        await sidecar.settled()
        sidecar.upstream("u").die(words)  # the same words, another kind: a restart, not a sign-in
        sidecar.upstream("s").die(words, kind=SignInNeeded)
        assert await sidecar.state_of("s", "needs-sign-in") == "needs-sign-in"
        assert await sidecar.state_of("u", "restarting", "ready") in ("restarting", "ready")
        engine = await sidecar.engine()
        is_tool_error, text = shape(await engine.call_and_wait("s__echo", {"text": "x"}))
    assert is_tool_error and text.startswith("Sign-in needed: upstream 's' ") and "omb-sidecar signin s" in text, text


async def test_a_start_refused_for_sign_in_waits_for_a_person() -> None:
    refused = FakeServer([tool("echo")], refuse_start=SignInNeeded("needs sign-in: a person must run `omb-sidecar signin s`"))
    async with in_memory({"s": refused}) as sidecar:
        assert await sidecar.state_of("s", "needs-sign-in") == "needs-sign-in"
