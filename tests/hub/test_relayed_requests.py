"""Requests an upstream relays to the engine (sampling, elicitation), in memory: the
upstream may cancel one (the engine is told, the relayed id is released), an engine answer
to an id not (or no longer) relayed is dropped, and a session whose sink is too full sheds
notifications and refuses relayed requests while its answers still go (SPEC §5, issue 12)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.harness import FakeEngine, FakeServer, InMemorySidecar, in_memory, text_of, tool

SAMPLE = {"messages": [], "maxTokens": 5}
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "sampled"}, "model": "m"}


def _servers(*aliases: str) -> dict[str, FakeServer]:
    return {alias: FakeServer([tool("ask")], name=alias) for alias in aliases}


def _answers_for(server: FakeServer, ident: str) -> list[dict[str, Any]]:
    return [f for f in server.received if f.get("id") == ident and "method" not in f]


async def _relay(sidecar: InMemorySidecar, engine: FakeEngine, alias: str, ident: str) -> int:
    """Upstream `alias`, inside a call, asks the engine for a sample under `ident`; the id the engine sees."""
    engine.call(f"{alias}__ask", id=f"call-{alias}")
    await sidecar.upstream(alias).expect_call("ask")
    sidecar.upstream(alias).channel.emit({"jsonrpc": "2.0", "id": ident, "method": "sampling/createMessage",
                                          "params": SAMPLE})
    relayed = await engine.expect_request("sampling/createMessage")
    return int(relayed["id"])


async def test_an_upstream_cancelling_its_request_tells_the_engine_and_drops_the_late_answer() -> None:
    async with in_memory(_servers("f")) as sidecar:
        engine = await sidecar.engine(capabilities={"sampling": {}})
        upstream = sidecar.upstream("f")
        relayed = await _relay(sidecar, engine, "f", "s-1")
        upstream.notify("notifications/cancelled", {"requestId": "s-1", "reason": "the user gave up"})
        cancelled = await engine.expect_notification("notifications/cancelled")
        assert cancelled["params"] == {"requestId": relayed, "reason": "the user gave up"}
        assert relayed not in dict(engine.session.relayed.items())
        engine.respond(relayed, SAMPLED)  # the engine answers anyway
        await upstream.sync()
        assert _answers_for(upstream, "s-1") == []


async def test_a_cancel_releases_only_the_request_of_the_upstream_that_sent_it() -> None:
    """Both upstreams ask under the same id of their own; one cancels."""
    async with in_memory(_servers("f", "g")) as sidecar:
        engine = await sidecar.engine(capabilities={"sampling": {}})
        from_f = await _relay(sidecar, engine, "f", "same")
        from_g = await _relay(sidecar, engine, "g", "same")
        sidecar.upstream("f").notify("notifications/cancelled", {"requestId": "same"})
        cancelled = await engine.expect_notification("notifications/cancelled")
        assert cancelled["params"]["requestId"] == from_f
        engine.respond(from_g, SAMPLED)
        engine.respond(from_f, SAMPLED)
        for alias in ("f", "g"):
            await sidecar.upstream(alias).sync()
        assert [a["result"] for a in _answers_for(sidecar.upstream("g"), "same")] == [SAMPLED]
        assert _answers_for(sidecar.upstream("f"), "same") == []
        assert len(engine.notifications("notifications/cancelled")) == 1


async def test_a_cancel_for_a_request_never_relayed_tells_the_engine_nothing() -> None:
    async with in_memory(_servers("f")) as sidecar:
        engine = await sidecar.engine(capabilities={"sampling": {}})
        relayed = await _relay(sidecar, engine, "f", "s-1")
        sidecar.upstream("f").notify("notifications/cancelled", {"requestId": "never-sent"})
        sidecar.upstream("f").notify("notifications/cancelled", ["not", "an", "object"])
        await sidecar.upstream("f").sync()
        assert engine.notifications("notifications/cancelled") == []
        engine.respond(relayed, SAMPLED)  # still relayed: its answer goes back
        await sidecar.upstream("f").sync()
        assert [a["result"] for a in _answers_for(sidecar.upstream("f"), "s-1")] == [SAMPLED]


async def test_engine_answers_to_unknown_or_answered_ids_are_dropped() -> None:
    async with in_memory(_servers("f")) as sidecar:
        engine = await sidecar.engine(capabilities={"sampling": {}})
        upstream = sidecar.upstream("f")
        relayed = await _relay(sidecar, engine, "f", "s-1")
        engine.respond(424242, SAMPLED)  # never relayed
        engine.respond("call-f", SAMPLED)  # an id of the engine's own, not one relayed
        engine.send({"jsonrpc": "2.0", "id": relayed, "error": {"code": -1, "message": "declined"}})
        engine.respond(relayed, SAMPLED)  # answered already
        await upstream.sync()
        answers = [f for f in upstream.received if "method" not in f and not str(f["id"]).startswith("ask-")]
        assert answers == [{"jsonrpc": "2.0", "id": "s-1", "error": {"code": -1, "message": "declined"}}]
        assert [f for f in engine.frames if "error" in f] == []  # the engine is not scolded for it
        assert (await engine.roundtrip("ping"))["result"] == {}


class Switch:
    """An `admit` the test turns: while `full`, the session's sink takes no more."""

    def __init__(self) -> None:
        self.full = False
        self.asked: list[str | None] = []

    def __call__(self, method: str | None) -> bool:
        self.asked.append(method)
        return not self.full


async def test_a_full_session_sheds_notifications_refuses_requests_and_keeps_its_answers() -> None:
    async with in_memory(_servers("f")) as sidecar:
        sink = Switch()
        engine = await sidecar.engine(capabilities={"sampling": {}}, admit=sink)
        upstream = sidecar.upstream("f")
        rid = engine.call("f__ask", meta={"progressToken": "p"})
        call = await upstream.expect_call("ask")
        sink.full = True
        call.progress(1, 2)
        upstream.notify("notifications/message", {"level": "info", "data": "chatter"})
        engine.session.resource_uris.add("mem://x")  # as its resources/subscribe leaves it
        upstream.notify("notifications/resources/updated", {"uri": "mem://x"})
        refused = await call.ask("sampling/createMessage", SAMPLE)
        assert refused["error"]["code"] == -32603
        assert refused["error"]["message"] == "the client is not reading what it is sent: sampling/createMessage refused"
        call.answer("still answered")
        assert text_of(await engine.answer_to(rid)) == "still answered"
        assert [f.get("method") for f in engine.frames if "method" in f] == []
        assert dict(engine.session.relayed.items()) == {}
        assert {"notifications/progress", "notifications/message", "notifications/resources/updated", None} <= set(sink.asked)


async def test_a_session_that_drains_again_gets_notifications_and_requests_again() -> None:
    async with in_memory(_servers("f")) as sidecar:
        sink = Switch()
        engine = await sidecar.engine(capabilities={"sampling": {}}, admit=sink)
        upstream = sidecar.upstream("f")
        sink.full = True
        upstream.notify("notifications/message", {"level": "info", "data": "dropped"})
        await upstream.sync()
        sink.full = False
        upstream.notify("notifications/message", {"level": "info", "data": "kept"})
        assert (await engine.expect_notification("notifications/message"))["params"]["data"] == "kept"
        relayed = await _relay(sidecar, engine, "f", "s-1")
        engine.respond(relayed, SAMPLED)
        await upstream.sync()
        assert [a["result"] for a in _answers_for(upstream, "s-1")] == [SAMPLED]
        assert len(engine.notifications("notifications/message")) == 1


@pytest.mark.looptime
async def test_an_answer_for_a_start_that_ended_never_reaches_the_next_start() -> None:
    async with in_memory(_servers("f")) as sidecar:
        engine = await sidecar.engine(capabilities={"sampling": {}})
        upstream = sidecar.upstream("f")
        relayed = await _relay(sidecar, engine, "f", "s-1")
        upstream.die()
        await sidecar.state_of("f", "restarting")
        await sidecar.state_of("f", "ready")
        engine.respond(relayed, SAMPLED)  # the engine answers the start that asked, now gone
        await upstream.sync()
        assert upstream.starts == 2 and _answers_for(upstream, "s-1") == []


async def test_a_request_goes_to_the_engine_whose_call_is_waiting_on_that_upstream() -> None:
    async with in_memory(_servers("f", "g")) as sidecar:
        idle = await sidecar.engine(capabilities={"sampling": {}})
        other = await sidecar.engine(capabilities={"sampling": {}})
        waiting = await sidecar.engine(capabilities={"sampling": {}})
        other.call("g__ask")
        await sidecar.upstream("g").expect_call("ask")
        waiting.call("f__ask")
        call = await sidecar.upstream("f").expect_call("ask")
        asked = asyncio.create_task(call.ask("sampling/createMessage", SAMPLE))
        relayed = await waiting.expect_request("sampling/createMessage")
        waiting.respond(relayed["id"], SAMPLED)
        assert (await asked)["result"] == SAMPLED
        for engine in (idle, other):
            assert [f for f in engine.frames if f.get("method") == "sampling/createMessage"] == []


async def test_the_engines_error_answer_reaches_the_upstream_with_its_code_and_words() -> None:
    async with in_memory(_servers("f")) as sidecar:
        engine = await sidecar.engine(capabilities={"sampling": {}, "elicitation": {}})
        upstream = sidecar.upstream("f")
        engine.call("f__ask")
        call = await upstream.expect_call("ask")
        shapes = [({"code": -1, "message": "the user declined"}, {"code": -1, "message": "the user declined"}),
                  ({"code": "x", "message": 5}, {"code": -32603, "message": "the client reported an error"})]
        for sent, received in shapes:
            asked = asyncio.create_task(call.ask("elicitation/create", {"message": "?", "requestedSchema": {}}))
            relayed = await engine.expect_request("elicitation/create")
            engine.send({"jsonrpc": "2.0", "id": relayed["id"], "error": sent})
            assert (await asked)["error"] == received


async def test_a_request_the_sidecar_does_not_relay_is_refused_to_the_upstream() -> None:
    async with in_memory(_servers("f")) as sidecar:
        engine = await sidecar.engine(capabilities={"sampling": {}})
        answer = await sidecar.upstream("f").ask("tools/list")  # an upstream asking the client for tools
        assert answer["error"] == {"code": -32601, "message": "the sidecar does not relay tools/list"}
        assert [f for f in engine.frames if f.get("method") == "tools/list"] == []


async def test_ids_that_only_compare_equal_never_match_a_relayed_request() -> None:
    """RELIABILITY rule 1: `True == 1.0 == 1` in Python; on the wire they are not ids at all."""
    async with in_memory(_servers("f")) as sidecar:
        engine = await sidecar.engine(capabilities={"sampling": {}})
        upstream = sidecar.upstream("f")
        relayed = await _relay(sidecar, engine, "f", "s-1")
        assert relayed == 1
        engine.send({"jsonrpc": "2.0", "id": True, "result": {"forged": True}})
        engine.send({"jsonrpc": "2.0", "id": 1.0, "result": {"forged": True}})
        await upstream.sync()
        assert _answers_for(upstream, "s-1") == []
        engine.respond(relayed, SAMPLED)
        await upstream.sync()
        assert [a["result"] for a in _answers_for(upstream, "s-1")] == [SAMPLED]


async def test_an_upstream_request_under_an_id_that_is_not_one_is_not_relayed() -> None:
    async with in_memory(_servers("f")) as sidecar:
        engine = await sidecar.engine(capabilities={"sampling": {}, "roots": {}})
        upstream = sidecar.upstream("f")
        upstream.channel.emit({"jsonrpc": "2.0", "id": True, "method": "sampling/createMessage", "params": SAMPLE})
        upstream.channel.emit({"jsonrpc": "2.0", "id": 2.5, "method": "roots/list"})
        await upstream.sync()
        assert [f for f in engine.frames if "method" in f and "id" in f] == []
        assert sidecar.face.pool.get("f").connection.skipped_lines == 2  # type: ignore[union-attr]
