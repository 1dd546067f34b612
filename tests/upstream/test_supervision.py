"""Supervision in memory: a crash fails the calls in flight at once and is never retried,
the upstream restarts with backoff and pauses after a burst of crashes, a hung start is
left out, and one upstream's trouble touches no other's (RELIABILITY rules 5 and 6).

These run on virtual time (`looptime`): the backoff, the pause and start timeouts are
the real figures, and cost no real seconds."""

from __future__ import annotations

import asyncio
import logging

import pytest

from sidecar.upstream.supervisor import Backoff
from tests.harness import FakeServer, echo, in_memory, text_of, tool

pytestmark = pytest.mark.looptime


def _server(name: str = "c", **how: object) -> FakeServer:
    return FakeServer([tool("echo"), tool("work")], name=name, **how)  # type: ignore[arg-type]


async def test_a_crash_mid_call_fails_it_at_once_and_it_is_not_retried() -> None:
    async with in_memory({"c": _server()}) as sidecar:
        engine = await sidecar.engine()
        upstream = sidecar.upstream("c")
        rid = engine.call("c__work", {"text": "boom"})
        await upstream.expect_call("work")
        upstream.die()
        answer = await engine.answer_to(rid)
        assert answer["result"]["isError"] is True
        assert "upstream 'c' stopped (exit code -9); the call was not retried" in text_of(answer)
        await upstream.wait_started(2)
        assert await sidecar.state_of("c", "ready") == "ready"
        assert [f["params"]["arguments"] for f in upstream.frames("tools/call")] == [{"text": "boom"}]
        upstream.on_call = echo
        assert text_of(await engine.call_and_wait("c__echo", {"text": "back"})) == "back"


async def test_one_upstreams_crash_touches_no_other_upstreams_calls() -> None:
    async with in_memory({"a": _server("a"), "b": _server("b")}) as sidecar:
        engine = await sidecar.engine()
        hung = [engine.call("a__work") for _ in range(5)]
        others = [engine.call("b__work", {"text": f"b{n}"}) for n in range(5)]
        for _ in hung:
            await sidecar.upstream("a").expect_call("work")
        b_calls = [await sidecar.upstream("b").expect_call("work") for _ in others]
        sidecar.upstream("a").die()
        for rid in hung:
            assert "upstream 'a' stopped" in text_of(await engine.answer_to(rid))
        for call in b_calls:
            call.answer(call.arguments["text"])
        assert [text_of(await engine.answer_to(rid)) for rid in others] == [f"b{n}" for n in range(5)]


async def test_while_restarting_its_tools_stay_listed_and_answer_restarting() -> None:
    async with in_memory({"h": _server("h")}) as sidecar:
        engine = await sidecar.engine()
        upstream = sidecar.upstream("h")
        upstream.refuse_start = "its command could not be started (gone)"  # it stays down once it dies
        upstream.die()
        assert await sidecar.state_of("h", "restarting") == "restarting"
        assert "h__echo" in await engine.tool_names()
        answer = await engine.call_and_wait("h__echo")
        assert "upstream 'h' is restarting; the call was not run" in str(answer)
        assert "unknown tool" not in str(answer)
        upstream.refuse_start = None
        upstream.on_call = echo
        await sidecar.state_of("h", "ready")
        assert text_of(await engine.call_and_wait("h__echo", {"text": "back"})) == "back"


async def test_restarts_back_off_and_a_burst_of_crashes_pauses_the_upstream() -> None:
    loop = asyncio.get_running_loop()
    backoff = Backoff()
    async with in_memory({"c": _server()}) as sidecar:
        engine = await sidecar.engine()
        upstream = sidecar.upstream("c")
        started = [loop.time()]
        for crash in range(1, backoff.burst):
            await sidecar.state_of("c", "ready")
            upstream.die()
            await upstream.wait_started(crash + 1)
            started.append(loop.time())
        gaps = [later - earlier for earlier, later in zip(started, started[1:])]
        # virtual time, but a loop turn spent waiting on a thread may still add a step
        assert gaps == pytest.approx([backoff.first * 2 ** n for n in range(backoff.burst - 1)], abs=0.05)
        await sidecar.state_of("c", "ready")
        upstream.die()  # the fifth crash inside the window: the circuit opens
        assert await sidecar.state_of("c", "paused") == "paused"
        answer = await engine.call_and_wait("c__echo")
        assert "crashed repeatedly and is paused for a while" in str(answer)
        paused_at = loop.time()
        await upstream.wait_started(backoff.burst + 1, within=backoff.pause + 1)
        assert loop.time() - paused_at == pytest.approx(backoff.pause, abs=0.05)
        assert await sidecar.state_of("c", "ready") == "ready"


async def test_a_hung_upstream_is_left_out_after_its_start_timeout_and_the_rest_serve(caplog) -> None:
    caplog.set_level(logging.WARNING, logger="sidecar.upstream.supervisor")
    servers = {"slow": _server("slow", answers_initialize=False), "ok": _server("ok", on_call=echo)}
    async with in_memory(servers, entries={"slow": {"startTimeoutSeconds": 1}}) as sidecar:
        loop = asyncio.get_running_loop()
        began = loop.time()
        engine = await sidecar.engine()
        assert loop.time() - began == pytest.approx(1.0, abs=0.05)  # the first listing waited for it, no longer
        assert sorted(await engine.tool_names()) == ["ok__echo", "ok__work", "query_result"]
        assert text_of(await engine.call_and_wait("ok__echo", {"text": "x"})) == "x"
        answer = await engine.call_and_wait("slow__echo")
        assert answer["error"]["message"] == "unknown tool 'slow__echo' at params.name"
        assert any("did not answer within 1s" in r.getMessage() for r in caplog.records)


async def test_an_upstream_that_cannot_start_drops_only_itself() -> None:
    servers = {"dead": _server("dead", refuse_start="its command could not be started (No such file)"),
               "ok": _server("ok", on_call=echo)}
    async with in_memory(servers) as sidecar:
        engine = await sidecar.engine()
        assert sidecar.face.pool.get("dead").state == "failed"  # type: ignore[union-attr]
        assert sorted(await engine.tool_names()) == ["ok__echo", "ok__work", "query_result"]
        assert text_of(await engine.call_and_wait("ok__echo", {"text": "fine"})) == "fine"


async def test_crashes_further_apart_than_the_window_never_open_the_circuit() -> None:
    backoff = Backoff()
    async with in_memory({"c": _server()}) as sidecar:
        await sidecar.engine()
        upstream = sidecar.upstream("c")
        for crash in range(1, 2 * backoff.burst):
            await sidecar.state_of("c", "ready")
            if crash % (backoff.burst - 1) == 0:
                await asyncio.sleep(backoff.window)  # the scenario: a quiet minute passes (virtual time)
            upstream.die()
            await upstream.wait_started(crash + 1)
            assert sidecar.face.pool.get("c").state != "paused"  # type: ignore[union-attr]
        assert await sidecar.state_of("c", "ready") == "ready"
