"""Issue 24, list changes: a 2026-07-28-only server (the `mcp` SDK's low-level server over
HTTP, its `initialize` refused: tests/eras/changing_server.py `--modern`) has no session
to say its lists changed on. The sidecar keeps a `subscriptions/listen` stream open on it
when its capabilities say it serves one, and otherwise re-reads its lists on a bound
(`OMB_RELIST_SECONDS`); either way every engine era hears the change and lists it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import await_event, read_event_file, wait_until
from tests.eras.changing_support import COUNTER, LIST_CHANGES, Heard, heard_then, open_stateless_server, sdk_names
from tests.eras.eras_support import MODERN, Person, sdk_client, sdk_wait_for_tools
from tests.http.http_support import open_http_sidecar

pytestmark = pytest.mark.e2e


def _config(write_config: Any, url: str) -> Path:
    path: Path = write_config({"changing": {"type": "http", "url": url, "pinning": "off"}})
    return path


def _grown(client: Any) -> Any:
    async def grown() -> bool:
        tools, prompts, resources = await sdk_names(client)
        return "changing__extra_1" in tools and "changing__extra_1" in prompts and "mem://extra/extra_1" in resources
    return grown


async def test_a_stateless_servers_changes_reach_an_http_session_engine(write_config, tmp_path: Path) -> None:
    events = tmp_path / "changing.jsonl"
    heard = Heard()
    async with open_stateless_server(events) as url, open_http_sidecar(_config(write_config, url), tmp_path) as sc:
        async with sdk_client(sc.url, sc.token, Person(), "legacy", message_handler=heard) as client:
            await sdk_wait_for_tools(client, "changing__echo")
            listened = await await_event(events, lambda e: e["event"] == "listen")
            mark = len(heard.notes)
            await client.call_tool("changing__grow", {})
            for method in LIST_CHANGES:
                await heard_then(heard.notes, mark, method, _grown(client))
    # The sidecar listens on the server for every kind it offers, as a 2026-07-28 client.
    assert listened["filter"] == {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True}


async def test_a_stateless_servers_changes_reach_a_stdio_engine(write_config, sidecar_client, tmp_path: Path) -> None:
    events = tmp_path / "changing.jsonl"
    async with open_stateless_server(events) as url, sidecar_client(_config(write_config, url)) as c:
        await c.wait_for_tools({"changing__echo"})
        await await_event(events, lambda e: e["event"] == "listen")
        mark = len(c.notifications)
        with anyio.fail_after(30):
            await c.session.call_tool("changing__grow", {})
        for method in LIST_CHANGES:
            await heard_then(c.notifications, mark, method, _grown(c.session))


async def test_a_stateless_servers_changes_reach_a_stateless_engines_listen_stream(write_config,
                                                                                  tmp_path: Path) -> None:
    events = tmp_path / "changing.jsonl"
    async with open_stateless_server(events) as url, open_http_sidecar(_config(write_config, url), tmp_path) as sc:
        async with sdk_client(sc.url, sc.token, Person(), MODERN) as client:
            await sdk_wait_for_tools(client, "changing__echo")
            await await_event(events, lambda e: e["event"] == "listen")
            with anyio.fail_after(30):
                async with client.listen(prompts_list_changed=True) as sub:
                    await client.call_tool("changing__grow_tools", {})  # tools only: not news to this stream
                    await client.call_tool("changing__grow", {})  # tools, prompts and resources
                    event = await anext(sub)
                    prompts = {prompt.name for prompt in (await client.list_prompts()).prompts}
    assert type(event).__name__ == "PromptsListChanged" and "changing__extra_2" in prompts


async def test_a_stateless_server_without_listen_is_re_read_on_the_bound(write_config, tmp_path: Path) -> None:
    heard = Heard()
    async with open_stateless_server(listen=False) as url, \
            open_http_sidecar(_config(write_config, url), tmp_path, env={"OMB_RELIST_SECONDS": "0.3"}) as sc:
        async with sdk_client(sc.url, sc.token, Person(), "legacy", message_handler=heard) as client:
            await sdk_wait_for_tools(client, "changing__echo")
            mark = len(heard.notes)
            await client.call_tool("changing__grow", {})
            for method in LIST_CHANGES:
                await heard_then(heard.notes, mark, method, _grown(client), timeout=20)
    assert "re-read every 0.3s" in sc.stderr


async def test_a_listen_stream_the_server_ends_is_opened_again(write_config, tmp_path: Path) -> None:
    events = tmp_path / "changing.jsonl"
    heard = Heard()
    async with open_stateless_server(events) as url, open_http_sidecar(_config(write_config, url), tmp_path) as sc:
        async with sdk_client(sc.url, sc.token, Person(), "legacy", message_handler=heard) as client:
            await sdk_wait_for_tools(client, "changing__echo")
            await await_event(events, lambda e: e["event"] == "listen")
            await client.call_tool("changing__end_listens", {})
            await await_event(events, lambda e: e["event"] == "listen" and _listens(events) >= 2)  # opened again
            mark = len(heard.notes)
            await client.call_tool("changing__grow", {})
            for method in LIST_CHANGES:
                await heard_then(heard.notes, mark, method, _grown(client))


def _listens(events: Path) -> int:
    return sum(1 for e in read_event_file(events) if e["event"] == "listen")


async def test_a_stateless_servers_resource_update_reaches_a_stateless_engine(write_config, tmp_path: Path) -> None:
    events = tmp_path / "changing.jsonl"
    async with open_stateless_server(events) as url, open_http_sidecar(_config(write_config, url), tmp_path) as sc:
        async with sdk_client(sc.url, sc.token, Person(), MODERN) as client:
            await sdk_wait_for_tools(client, "changing__echo")
            with anyio.fail_after(30):
                async with client.listen(resource_subscriptions=[COUNTER]) as sub:
                    # The sidecar's own stream on the server is opened again with the URI in its filter.
                    await await_event(events, lambda e: e["event"] == "listen"
                                      and e["filter"].get("resourceSubscriptions") == [COUNTER])
                    await client.call_tool("changing__bump", {})
                    event = await anext(sub)
            # The last stream asking for it ended: the sidecar's stream on the server goes back to lists only.
            await wait_until(lambda: _listens(events) >= 3 and "resourceSubscriptions" not in _last_listen(events),
                             timeout=30, what="the server's listen stream opened again without the URI")
    assert type(event).__name__ == "ResourceUpdated" and event.uri == COUNTER


def _last_listen(events: Path) -> dict[str, Any]:
    filters: list[dict[str, Any]] = [e["filter"] for e in read_event_file(events) if e["event"] == "listen"]
    return filters[-1]


async def test_a_session_engines_subscription_to_a_stateless_server_is_carried_by_the_sidecars_listen(
        write_config, tmp_path: Path) -> None:
    events = tmp_path / "changing.jsonl"
    heard = Heard()
    async with open_stateless_server(events) as url, open_http_sidecar(_config(write_config, url), tmp_path) as sc:
        async with sdk_client(sc.url, sc.token, Person(), "legacy", message_handler=heard) as client:
            await sdk_wait_for_tools(client, "changing__echo")
            await client.subscribe_resource(COUNTER)  # no such method at 2026-07-28: the sidecar's listen carries it
            await await_event(events, lambda e: e["event"] == "listen"
                              and e["filter"].get("resourceSubscriptions") == [COUNTER])
            mark = len(heard.notes)
            await client.call_tool("changing__bump", {})
            updated = await heard_then(heard.notes, mark, "notifications/resources/updated", _true)
            await client.unsubscribe_resource(COUNTER)
            await wait_until(lambda: "resourceSubscriptions" not in _last_listen(events), timeout=30,
                             what="the server's listen stream opened again without the URI")
    assert str(updated.params.uri) == COUNTER


async def _true() -> bool:
    return True
