"""A call's life through the core, in memory: ids, cancellation, progress, requests an
upstream sends to the engine, and errors an upstream returns (RELIABILITY rules 1 and 4)."""

from __future__ import annotations

import asyncio

import pytest

from tests.harness import FakeServer, in_memory, text_of, tool


def _servers(*aliases: str) -> dict[str, FakeServer]:
    return {alias: FakeServer([tool("echo"), tool("work"), tool("ask")], name=alias) for alias in aliases}


async def test_an_id_already_in_flight_is_refused_and_the_first_call_still_answers() -> None:
    async with in_memory(_servers("f")) as sidecar:
        engine = await sidecar.engine()
        engine.call("f__work", {"text": "first"}, id="dup")
        first = await sidecar.upstream("f").expect_call("work")
        engine.call("f__echo", {"text": "second"}, id="dup")
        refused = await engine.answer_to("dup")
        assert refused["error"]["code"] == -32600 and "already in use" in refused["error"]["message"]
        first.answer("first")
        assert text_of(await engine.answer_to("dup")) == "first"
        assert sidecar.upstream("f").pending_calls() == 0  # the refused call never left


async def test_two_engines_using_the_same_id_each_get_their_own_answer() -> None:
    """Real clients send `id: 1` on every request: the upstream sees its own fresh ids."""
    async with in_memory(_servers("f")) as sidecar:
        one, two = await sidecar.engine(), await sidecar.engine()
        one.call("f__echo", {"text": "for one"}, id=1)
        two.call("f__echo", {"text": "for two"}, id=1)
        upstream = sidecar.upstream("f")
        calls = [await upstream.expect_call("echo"), await upstream.expect_call("echo")]
        assert len({call.id for call in calls}) == 2
        for call in reversed(calls):  # answered in the other order
            call.answer(call.arguments["text"])
        assert text_of(await one.answer_to(1)) == "for one"
        assert text_of(await two.answer_to(1)) == "for two"
        assert len(one.answers_to(1)) == len(two.answers_to(1)) == 1


async def test_answers_to_ids_never_sent_and_repeated_answers_are_dropped() -> None:
    async with in_memory(_servers("f")) as sidecar:
        engine = await sidecar.engine()
        upstream = sidecar.upstream("f")
        rid = engine.call("f__echo")
        call = await upstream.expect_call("echo")
        upstream.channel.send_line(b"not json at all")
        upstream.channel.emit({"jsonrpc": "2.0", "id": 9999, "result": {"content": []}})
        call.answer("once")
        call.answer("twice")
        await upstream.sync()
        assert [text_of(a) for a in engine.answers_to(rid)] == ["once"]
        conn = sidecar.face.pool.get("f").connection  # type: ignore[union-attr]
        assert conn is not None and (conn.skipped_lines, conn.stray_answers) == (1, 2)


async def test_a_cancel_reaches_the_upstream_and_its_late_answer_is_dropped() -> None:
    async with in_memory(_servers("f")) as sidecar:
        engine = await sidecar.engine()
        upstream = sidecar.upstream("f")
        rid = engine.call("f__work")
        call = await upstream.expect_call("work")
        engine.cancel(rid, "user pressed stop")
        assert await call.until_cancelled() == "cancelled by the client"
        call.answer("late")  # the upstream answers anyway: nothing may reach the engine
        await upstream.sync()
        await engine.roundtrip("ping")
        assert engine.answers_to(rid) == []
        assert sidecar.face.pool.get("f").connection.in_flight == 0  # type: ignore[union-attr]


async def test_progress_comes_back_under_the_engines_token_and_stops_with_the_call() -> None:
    async with in_memory(_servers("f")) as sidecar:
        engine = await sidecar.engine()
        upstream = sidecar.upstream("f")
        rid = engine.call("f__work", meta={"progressToken": "engine-token-1"})
        call = await upstream.expect_call("work")
        assert call.progress_token is not None and call.progress_token != "engine-token-1"
        for n in range(25):
            call.progress(n + 1, 25)
        call.answer("done")
        assert text_of(await engine.answer_to(rid)) == "done"
        call.progress(26, 25)  # after the answer: not relayed
        await upstream.sync()
        progress = [f["params"] for f in engine.notifications("notifications/progress")]
        assert [p["progress"] for p in progress] == list(range(1, 26))
        assert {p["progressToken"] for p in progress} == {"engine-token-1"}


async def test_a_call_without_a_progress_token_gets_no_progress() -> None:
    async with in_memory(_servers("f")) as sidecar:
        engine = await sidecar.engine()
        rid = engine.call("f__work")
        call = await sidecar.upstream("f").expect_call("work")
        assert call.progress_token is None
        call.answer("done")
        await engine.answer_to(rid)
        assert engine.notifications("notifications/progress") == []


async def test_requests_from_upstreams_reach_an_engine_that_declared_them_under_its_own_ids() -> None:
    async with in_memory(_servers("f", "g")) as sidecar:
        engine = await sidecar.engine(capabilities={"sampling": {}})
        asks = []
        for alias in ("f", "g"):
            engine.call(f"{alias}__ask", id=f"call-{alias}")
            call = await sidecar.upstream(alias).expect_call("ask")
            # both upstreams ask under the same id of their own ("ask-1")
            asks.append(asyncio.create_task(call.ask("sampling/createMessage", {"messages": [], "maxTokens": 5})))
        relayed = [await engine.expect_request("sampling/createMessage") for _ in asks]
        assert len({r["id"] for r in relayed}) == 2
        for n, request in reversed(list(enumerate(relayed))):
            engine.respond(request["id"], {"role": "assistant", "content": {"type": "text", "text": f"sampled {n}"},
                                           "model": "m"})
        answers = [await ask for ask in asks]
        assert sorted(a["result"]["content"]["text"] for a in answers) == ["sampled 0", "sampled 1"]
        assert {a["id"] for a in answers} == {"ask-1"}


async def test_a_request_the_engine_did_not_declare_is_refused_to_the_upstream() -> None:
    async with in_memory(_servers("f")) as sidecar:
        engine = await sidecar.engine(capabilities={"sampling": {}})
        engine.call("f__ask")
        call = await sidecar.upstream("f").expect_call("ask")
        answer = await call.ask("elicitation/create", {"message": "?", "requestedSchema": {"type": "object"}})
        assert answer["error"]["code"] == -32601
        assert "did not declare the elicitation capability" in answer["error"]["message"]
        assert [f for f in engine.frames if f.get("method") == "elicitation/create"] == []


async def test_an_upstreams_error_for_a_call_reaches_the_model_with_its_words() -> None:
    async with in_memory(_servers("f")) as sidecar:
        engine = await sidecar.engine()
        rid = engine.call("f__echo", {"text": 5})
        call = await sidecar.upstream("f").expect_call("echo")
        call.fail(-32602, "text must be a string")
        answer = await engine.answer_to(rid)
        assert answer["error"] == {"code": -32602, "message": "text must be a string"}


@pytest.mark.looptime
async def test_a_call_past_its_deadline_is_cancelled_upstream_and_answered_once() -> None:
    async with in_memory(_servers("f"), entries={"f": {"callDeadlineSeconds": 120}}) as sidecar:
        loop = asyncio.get_running_loop()
        engine = await sidecar.engine()
        rid = engine.call("f__work")
        call = await sidecar.upstream("f").expect_call("work")
        sent_at = loop.time()
        answer = await engine.answer_to(rid, within=130)
        assert loop.time() - sent_at == pytest.approx(120, abs=0.1)
        assert "upstream 'f' timed out after 120s" in str(answer)
        assert await call.until_cancelled() == "the sidecar's deadline for this call passed"
        call.answer("too late")
        await sidecar.upstream("f").sync()
        assert len(engine.answers_to(rid)) == 1
