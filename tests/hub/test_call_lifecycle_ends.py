"""A call whose engine session goes away while the upstream works on it: the upstream is
told to stop (RELIABILITY rule 4), once, and its late answer reaches nobody."""

from __future__ import annotations

from tests.harness import FakeServer, in_memory, tool


async def test_an_engine_session_that_ends_mid_call_cancels_the_call_upstream() -> None:
    async with in_memory({"f": FakeServer([tool("work")])}) as sidecar:
        engine = await sidecar.engine()
        upstream = sidecar.upstream("f")
        rid = engine.call("f__work")
        call = await upstream.expect_call("work")
        await engine.aclose()
        assert await call.until_cancelled() == "the sidecar stopped waiting for this request"
        call.answer("late")
        await upstream.sync()
        assert engine.answers_to(rid) == []
        assert len(upstream.frames("notifications/cancelled")) == 1


async def test_a_call_the_engine_cancelled_before_its_session_ended_is_cancelled_once() -> None:
    async with in_memory({"f": FakeServer([tool("work")])}) as sidecar:
        engine = await sidecar.engine()
        upstream = sidecar.upstream("f")
        rid = engine.call("f__work")
        call = await upstream.expect_call("work")
        engine.cancel(rid)
        assert await call.until_cancelled() == "cancelled by the client"
        await engine.aclose()
        await upstream.sync()
        assert len(upstream.frames("notifications/cancelled")) == 1
