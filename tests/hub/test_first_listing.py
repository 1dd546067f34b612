"""The first listing and upstreams still starting, in memory: `listWaitSeconds` holds the
first `tools/list` until upstreams settle (or not at all), and a call to a tool of an
upstream on its first start waits for it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.harness import FakeServer, echo, in_memory, text_of, tool


def _slow() -> FakeServer:
    return FakeServer([tool("echo")], answers_initialize=False, on_call=echo, name="slow")


async def test_list_wait_holds_the_first_listing_until_upstreams_settle() -> None:
    server = _slow()
    async with in_memory({"slow": server}, face={"listWaitSeconds": 20}) as sidecar:
        engine = await sidecar.engine(settle=False)
        await server.handshake_held()
        rid = engine.request("tools/list")
        await engine.roundtrip("ping")
        assert engine.answers_to(rid) == []  # held while the upstream is still starting
        server.finish_start()
        first = await engine.answer_to(rid)
        assert [t["name"] for t in first["result"]["tools"]] == ["query_result", "slow__echo"]


async def test_with_no_list_wait_the_first_listing_does_not_wait() -> None:
    server = _slow()
    async with in_memory({"slow": server}, face={"listWaitSeconds": 0}) as sidecar:
        engine = await sidecar.engine(settle=False)
        await server.handshake_held()
        assert await engine.tool_names() == ["query_result"]
        server.finish_start()
        await engine.expect_notification("notifications/tools/list_changed")
        assert "slow__echo" in await engine.tool_names()


async def test_a_call_to_an_upstream_still_starting_waits_for_it() -> None:
    server = _slow()
    async with in_memory({"slow": server}, face={"listWaitSeconds": 0}) as sidecar:
        engine = await sidecar.engine(settle=False)
        await server.handshake_held()
        rid = engine.call("slow__echo", {"text": "waited"})
        await engine.roundtrip("ping")
        assert engine.answers_to(rid) == []
        server.finish_start()
        assert text_of(await engine.answer_to(rid)) == "waited"


async def test_a_read_of_a_resource_no_listing_names_yet_waits_for_the_server_still_starting() -> None:
    """The one server offering resources so far is not taken for the owner of an address
    it never listed while another server is still starting."""
    def contents(owner: str) -> Callable[[dict[str, Any]], Any]:
        return lambda params: {"contents": [{"uri": params["uri"], "text": f"from {owner}"}]}

    fast = FakeServer([tool("echo")], resources=[{"uri": "fast://a", "name": "a"}],
                      answers={"resources/read": contents("fast")}, name="fast")
    slow = FakeServer([tool("echo")], resources=[{"uri": "slow://hello", "name": "hello"}],
                      answers={"resources/read": contents("slow")}, answers_initialize=False, name="slow")
    async with in_memory({"fast": fast, "slow": slow}, face={"listWaitSeconds": 0}) as sidecar:
        engine = await sidecar.engine(settle=False)
        await slow.handshake_held()
        await sidecar.state_of("fast", "ready")
        rid = engine.request("resources/read", {"uri": "slow://hello"})
        await engine.roundtrip("ping")
        assert engine.answers_to(rid) == []  # not sent to the one server ready so far
        slow.finish_start()
        answer = await engine.answer_to(rid)
        assert answer["result"]["contents"][0]["text"] == "from slow", answer
