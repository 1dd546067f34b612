"""Issue 24, list changes: a session-era server (the `mcp` SDK's low-level server on
stdio, tests/eras/changing_server.py) says its tools, prompts and resources changed, and
that a subscribed resource was updated; each engine era hears it and its next listing
shows the change. A stateless (2026-07-28) engine hears it on its `subscriptions/listen`
stream, only the kinds and resources its filter asked for."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.conftest import await_event, read_event_file
from tests.eras.changing_support import COUNTER, LIST_CHANGES, Heard, heard_then, sdk_names, session_entry
from tests.eras.eras_support import MODERN, Person, sdk_client, sdk_wait_for_tools
from tests.http.http_support import open_http_sidecar

pytestmark = pytest.mark.e2e

UPDATED = "notifications/resources/updated"


async def test_a_session_servers_changes_reach_an_http_session_engine(write_config, tmp_path: Path) -> None:
    heard = Heard()
    async with open_http_sidecar(write_config({"changing": session_entry()}), tmp_path) as sc:
        async with sdk_client(sc.url, sc.token, Person(), "legacy", message_handler=heard) as client:
            await sdk_wait_for_tools(client, "changing__echo")
            await client.subscribe_resource(COUNTER)
            mark = len(heard.notes)
            await client.call_tool("changing__grow", {})

            async def grown() -> bool:
                tools, prompts, resources = await sdk_names(client)
                return "changing__extra_1" in tools and "changing__extra_1" in prompts \
                    and "mem://extra/extra_1" in resources

            for method in LIST_CHANGES:
                await heard_then(heard.notes, mark, method, grown)
            mark = len(heard.notes)
            await client.call_tool("changing__bump", {})
            updated = await heard_then(heard.notes, mark, UPDATED, _true)
    assert str(updated.params.uri) == COUNTER


async def test_a_session_servers_changes_reach_a_stdio_engine(write_config, sidecar_client, tmp_path: Path) -> None:
    config = write_config({"changing": session_entry()})
    async with sidecar_client(config) as c:
        await c.wait_for_tools({"changing__echo"})
        await c.session.subscribe_resource(COUNTER)
        mark = len(c.notifications)
        with anyio.fail_after(30):
            await c.session.call_tool("changing__grow", {})

        async def grown() -> bool:
            return "changing__extra_1" in (await sdk_names(c.session))[0]

        for method in LIST_CHANGES:
            await heard_then(c.notifications, mark, method, grown)
        mark = len(c.notifications)
        with anyio.fail_after(30):
            await c.session.call_tool("changing__bump", {})
        updated = await heard_then(c.notifications, mark, UPDATED, _true)
    assert str(updated.params.uri) == COUNTER


async def test_a_session_servers_changes_reach_a_stateless_engines_listen_stream(write_config,
                                                                                 tmp_path: Path) -> None:
    events = tmp_path / "changing.jsonl"
    async with open_http_sidecar(write_config({"changing": session_entry(events)}), tmp_path) as sc:
        async with sdk_client(sc.url, sc.token, Person(), MODERN) as client:
            await sdk_wait_for_tools(client, "changing__echo")
            with anyio.fail_after(30):
                async with client.listen(tools_list_changed=True,
                                         resource_subscriptions=[COUNTER, "mem://nowhere"]) as sub:
                    honored = sub.honored
                    await client.call_tool("changing__grow", {})  # tools, prompts and resources change
                    first = await anext(sub)
                    tools = {tool.name for tool in (await client.list_tools()).tools}
                    await client.call_tool("changing__bump", {})
                    second = await anext(sub)
            await await_event(events, lambda e: e["event"] == "unsubscribe" and e["uri"] == COUNTER)
    # The filter: tools and the two resources (the face's only resource server owns every URI, and
    # takes a subscription to one it does not list, as the SDK's own listen does), nothing else.
    assert honored.tools_list_changed is True and not honored.prompts_list_changed
    assert honored.resource_subscriptions == [COUNTER, "mem://nowhere"]
    assert type(first).__name__ == "ToolsListChanged" and "changing__extra_1" in tools
    assert type(second).__name__ == "ResourceUpdated" and second.uri == COUNTER  # no prompt/resource list news between
    assert [e["uri"] for e in read_event_file(events) if e["event"] == "subscribe"] == [COUNTER, "mem://nowhere"]


async def _true() -> bool:
    return True


async def test_a_server_that_restarts_is_subscribed_again_for_an_open_listen_stream(write_config,
                                                                                    tmp_path: Path) -> None:
    events = tmp_path / "changing.jsonl"
    async with open_http_sidecar(write_config({"changing": session_entry(events)}), tmp_path) as sc:
        async with sdk_client(sc.url, sc.token, Person(), MODERN) as client:
            await sdk_wait_for_tools(client, "changing__echo")
            with anyio.fail_after(60):
                async with client.listen(resource_subscriptions=[COUNTER]) as sub:
                    crashed = await client.call_tool("changing__crash", {})  # the call dies with its server
                    await await_event(events, lambda e: e["event"] == "subscribe" and _pids(events) == 2,
                                      timeout=30)
                    await client.call_tool("changing__bump", {})
                    event = await anext(sub)
    assert crashed.is_error
    assert type(event).__name__ == "ResourceUpdated" and event.uri == COUNTER


def _pids(events: Path) -> int:
    """How many server processes subscribed (one before the crash, one after)."""
    return len({e["pid"] for e in read_event_file(events) if e["event"] == "subscribe"})
