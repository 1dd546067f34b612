"""Upstreams that arrive together, in memory: their first listings prepared side by side
make one rebuild of the face and one `list_changed` to an engine that listed before them
(SPEC §3: said when what the engine sees changed, once per change); a late one still
rebuilds and is said on its own."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sidecar.hub import Face
from tests.harness import FakeServer, in_memory, tool

# Enough tools that each first listing's trust work takes more than one loop turn.
TOOLS = 120


def _server(alias: str) -> FakeServer:
    tools = [tool(f"t{n}", f"tool {n} of {alias}: reads the {alias} records") for n in range(TOOLS)]
    return FakeServer(tools, answers_initialize=False, name=alias)


@contextmanager
def _rebuilds(face: Face) -> Iterator[list[int]]:
    """How many times the face rebuilds while the block runs (the method itself still runs)."""
    counted = [0]
    rebuild = face.rebuild

    def counting() -> None:
        counted[0] += 1
        rebuild()

    face.rebuild = counting  # type: ignore[method-assign]
    try:
        yield counted
    finally:
        del face.rebuild


async def test_upstreams_whose_first_listings_come_together_are_one_rebuild_and_one_change() -> None:
    servers = {alias: _server(alias) for alias in ("a", "b", "c")}
    async with in_memory(servers, face={"listWaitSeconds": 0}) as sidecar:
        engine = await sidecar.engine(settle=False)
        for server in servers.values():
            await server.handshake_held()
        assert await engine.tool_names() == ["query_result"]
        with _rebuilds(sidecar.face) as rebuilds:
            for server in servers.values():
                server.finish_start()
            await sidecar.settled()
            await engine.expect_notification("notifications/tools/list_changed")
            names = await engine.tool_names()
        assert rebuilds == [1]
        assert len(names) == 1 + 3 * TOOLS
        assert len(engine.notifications("notifications/tools/list_changed")) == 1


async def test_a_listing_asked_for_while_they_arrive_has_them_all() -> None:
    servers = {alias: _server(alias) for alias in ("a", "b")}
    async with in_memory(servers, face={"listWaitSeconds": 20}) as sidecar:
        engine = await sidecar.engine(settle=False)
        for server in servers.values():
            await server.handshake_held()
        listing = engine.request("tools/list")
        with _rebuilds(sidecar.face) as rebuilds:
            for server in servers.values():
                server.finish_start()
            answer = await engine.answer_to(listing)
        assert rebuilds == [1]
        assert len(answer["result"]["tools"]) == 1 + 2 * TOOLS


async def test_a_late_upstream_still_rebuilds_and_is_said() -> None:
    servers = {alias: _server(alias) for alias in ("a", "b", "late")}
    async with in_memory(servers, face={"listWaitSeconds": 0}) as sidecar:
        engine = await sidecar.engine(settle=False)
        for server in servers.values():
            await server.handshake_held()
        with _rebuilds(sidecar.face) as rebuilds:
            servers["a"].finish_start()
            servers["b"].finish_start()
            await sidecar.state_of("b", "ready")
            await sidecar.state_of("a", "ready")
            await engine.expect_notification("notifications/tools/list_changed")
            assert len(await engine.tool_names()) == 1 + 2 * TOOLS
            servers["late"].finish_start()
            await sidecar.settled()
            await engine.roundtrip("ping")
        assert rebuilds == [2]
        assert len(engine.notifications("notifications/tools/list_changed")) == 2
        assert len(await engine.tool_names()) == 1 + 3 * TOOLS
