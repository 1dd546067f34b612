"""Notifications across the face, in memory: what upstreams say reaches the engine (secrets
hidden), what the engine says reaches the upstreams it concerns, and resource subscriptions
go to the upstream that owns the resource."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.harness import FakeEngine, FakeServer, in_memory, tool

SECRET = "tok-9f8e7d6c5b4a3210"  # a configured credential: never shown to the engine
ENTRIES = {"f": {"env": {"API_TOKEN": SECRET}}}


def _subscribable(alias: str, uri: str) -> FakeServer:
    return FakeServer([tool("echo")], resources=[{"uri": uri, "name": alias}], name=alias,
                      answers={"resources/subscribe": lambda p: {}, "resources/unsubscribe": lambda p: {}})


async def test_an_upstreams_log_message_reaches_the_engine_with_secrets_hidden() -> None:
    async with in_memory({"f": FakeServer([tool("echo")])}, entries=ENTRIES) as sidecar:
        engine = await sidecar.engine()
        upstream = sidecar.upstream("f")
        upstream.notify("notifications/message", {"level": "error", "logger": "auth",
                                                  "data": {"detail": f"login with {SECRET} refused"}})
        message = await engine.expect_notification("notifications/message")
        assert message["params"] == {"level": "error", "logger": "auth",
                                     "data": {"detail": "login with [redacted] refused"}}
        assert SECRET not in str(engine.frames)


async def test_a_resource_update_reaches_every_engine_subscribed_with_secrets_hidden() -> None:
    uri = f"mem://f/doc?key={SECRET}"
    servers = {"f": _subscribable("f", uri)}
    async with in_memory(servers, entries=ENTRIES) as sidecar:
        one, two, other = await sidecar.engine(), await sidecar.engine(), await sidecar.engine()
        for engine in (one, two):
            assert (await engine.roundtrip("resources/subscribe", {"uri": uri}))["result"] == {}
        sidecar.upstream("f").notify("notifications/resources/updated", {"uri": uri})
        for engine in (one, two):
            updated = await engine.expect_notification("notifications/resources/updated")
            assert updated["params"] == {"uri": "mem://f/doc?key=[redacted]"}
        assert (await other.roundtrip("ping"))["result"] == {}  # what was sent to it has arrived
        assert not [f for f in other.frames if f.get("method") == "notifications/resources/updated"]


async def test_a_subscription_goes_to_the_upstream_that_owns_the_resource_only() -> None:
    servers = {"f": _subscribable("f", "mem://f/doc"), "g": _subscribable("g", "mem://g/doc")}
    async with in_memory(servers) as sidecar:
        engine = await sidecar.engine()
        assert (await engine.roundtrip("resources/subscribe", {"uri": "mem://g/doc"}))["result"] == {}
        sidecar.upstream("g").notify("notifications/resources/updated", {"uri": "mem://g/doc"})
        assert (await engine.expect_notification("notifications/resources/updated"))["params"] == {"uri": "mem://g/doc"}
        assert (await engine.roundtrip("resources/unsubscribe", {"uri": "mem://g/doc"}))["result"] == {}
        assert [f["params"] for f in sidecar.upstream("g").frames("resources/subscribe")] == [{"uri": "mem://g/doc"}]
        assert len(sidecar.upstream("g").frames("resources/unsubscribe")) == 1
        assert sidecar.upstream("f").frames("resources/subscribe") == []


async def test_a_subscription_to_a_uri_under_an_upstreams_template_goes_to_that_upstream() -> None:
    g = _subscribable("g", "mem://g/doc")
    g.templates = [{"uriTemplate": "mem://g/items/{id}", "name": "item"}]
    servers = {"f": _subscribable("f", "mem://f/doc"), "g": g}
    async with in_memory(servers) as sidecar:
        engine = await sidecar.engine()
        assert (await engine.roundtrip("resources/subscribe", {"uri": "mem://g/items/42"}))["result"] == {}
        assert [f["params"]["uri"] for f in g.frames("resources/subscribe")] == ["mem://g/items/42"]
        assert sidecar.upstream("f").frames("resources/subscribe") == []


async def test_a_subscription_to_a_resource_nobody_owns_is_refused() -> None:
    servers = {"f": _subscribable("f", "mem://f/doc"), "g": _subscribable("g", "mem://g/doc")}
    async with in_memory(servers) as sidecar:
        engine = await sidecar.engine()
        answer = await engine.roundtrip("resources/subscribe", {"uri": "mem://nobody/doc"})
        assert answer["error"]["code"] == -32002 and "unknown resource 'mem://nobody/doc'" in answer["error"]["message"]
        assert sidecar.upstream("f").frames("resources/subscribe") == sidecar.upstream("g").frames("resources/subscribe") == []


def _logging(alias: str, **how: Any) -> FakeServer:
    return FakeServer([tool("echo")], name=alias, capabilities={"logging": {}},
                      answers={"logging/setLevel": lambda p: {}}, **how)


async def test_a_log_level_goes_to_the_upstreams_that_declared_logging_and_no_other() -> None:
    servers = {"f": _logging("f"), "g": FakeServer([tool("echo")], name="g"), "h": _logging("h")}
    async with in_memory(servers) as sidecar:
        engine = await sidecar.engine()
        answer = await engine.roundtrip("logging/setLevel", {"level": "debug"})
        assert answer["result"] == {}
        for alias in ("f", "g", "h"):
            await sidecar.upstream(alias).sync()  # whatever the sidecar sent it has arrived
        for alias in ("f", "h"):
            assert [f["params"] for f in sidecar.upstream(alias).frames("logging/setLevel")] == [{"level": "debug"}]
            conn = sidecar.face.pool.get(alias).connection  # type: ignore[union-attr]
            assert conn is not None and conn.in_flight == 0  # its answer was taken and forgotten
        assert sidecar.upstream("g").frames("logging/setLevel") == []


async def test_a_log_level_that_is_not_a_string_is_refused_and_sent_nowhere() -> None:
    async with in_memory({"f": _logging("f")}) as sidecar:
        engine = await sidecar.engine()
        answer = await engine.roundtrip("logging/setLevel", {"level": 3})
        assert answer["error"]["code"] == -32602 and "params.level" in answer["error"]["message"]
        await sidecar.upstream("f").sync()
        assert sidecar.upstream("f").frames("logging/setLevel") == []


async def test_the_engines_roots_change_reaches_ready_upstreams_only() -> None:
    servers = {"f": FakeServer([tool("echo")], name="f"), "g": FakeServer([tool("echo")], name="g"),
               "slow": FakeServer([tool("echo")], name="slow", answers_initialize=False)}
    async with in_memory(servers) as sidecar:
        await sidecar.state_of("f", "ready")
        await sidecar.state_of("g", "ready")
        await sidecar.upstream("slow").handshake_held()
        engine = await sidecar.engine(capabilities={"roots": {"listChanged": True}}, settle=False)
        engine.notify("notifications/roots/list_changed")
        for alias in ("f", "g"):
            await sidecar.upstream(alias).sync()
            assert len(sidecar.upstream(alias).frames("notifications/roots/list_changed")) == 1
        assert sidecar.upstream("slow").frames("notifications/roots/list_changed") == []
        assert [f for f in engine.frames if "error" in f] == []  # a notification gets no answer


async def test_an_engine_hears_nothing_before_its_initialize_is_answered() -> None:
    async with in_memory({"f": FakeServer([tool("echo")])}) as sidecar:
        await sidecar.settled()
        engine = FakeEngine(sidecar.face)
        sidecar.engines.append(engine)  # closed with the sidecar
        upstream = sidecar.upstream("f")
        upstream.notify("notifications/message", {"level": "info", "data": "too early"})
        await upstream.sync()
        assert engine.frames == []
        await engine.initialize()
        upstream.notify("notifications/message", {"level": "info", "data": "heard"})
        assert (await engine.expect_notification("notifications/message"))["params"]["data"] == "heard"
        assert len(engine.notifications("notifications/message")) == 1


async def test_progress_an_upstream_reports_reaches_the_engine_with_secrets_hidden() -> None:
    async with in_memory({"f": FakeServer([tool("work")])}, entries=ENTRIES) as sidecar:
        engine = await sidecar.engine()
        rid = engine.call("f__work", meta={"progressToken": "p"})
        call = await sidecar.upstream("f").expect_call("work")
        call.progress(1, 2, f"fetched with {SECRET}")
        progress = await engine.expect_notification("notifications/progress")
        assert progress["params"] == {"progressToken": "p", "progress": 1, "total": 2,
                                      "message": "fetched with [redacted]"}
        call.answer("done")
        await engine.answer_to(rid)


async def test_a_request_an_upstream_relays_reaches_the_engine_with_secrets_hidden() -> None:
    async with in_memory({"f": FakeServer([tool("ask")])}, entries=ENTRIES) as sidecar:
        engine = await sidecar.engine(capabilities={"elicitation": {}})
        engine.call("f__ask")
        call = await sidecar.upstream("f").expect_call("ask")
        asked = asyncio.create_task(call.ask("elicitation/create", {"message": f"confirm {SECRET}?",
                                                                     "requestedSchema": {"type": "object"}}))
        relayed = await engine.expect_request("elicitation/create")
        assert relayed["params"]["message"] == "confirm [redacted]?"
        call.channel.emit({"jsonrpc": "2.0", "method": "notifications/cancelled",
                           "params": {"requestId": "ask-1", "reason": f"{SECRET} expired"}})
        cancelled = await engine.expect_notification("notifications/cancelled")
        assert cancelled["params"] == {"requestId": relayed["id"], "reason": "[redacted] expired"}
        assert SECRET not in str(engine.frames)
        asked.cancel()
        await asyncio.wait([asked])
