"""`notifications/resources/updated` reaches the engine sessions that asked for that URI,
and no other, on every front: two HTTP sessions of which one subscribed, a stdio engine
before and after it subscribes, and a shared upstream subscription that one session's
unsubscribe does not end for another. The upstream is a real session-era server
(tests/eras/changing_server.py) whose `bump` tool announces `mem://counter` changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import await_event, read_event_file
from tests.eras.changing_support import COUNTER, Heard, heard_then, method_of, session_entry
from tests.eras.eras_support import Person, sdk_client, sdk_wait_for_tools
from tests.http.http_support import open_http_sidecar

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120), pytest.mark.filterwarnings("ignore::DeprecationWarning")]

UPDATED = "notifications/resources/updated"
TOOLS_CHANGED = "notifications/tools/list_changed"


async def _true() -> bool:
    return True


async def _marker(client: Any, heard: list[Any]) -> None:
    """A change every session hears, on the same stream as an update would come: once it is
    heard, an update sent before it would have been heard first."""
    mark = len(heard)
    with anyio.fail_after(30):
        await client.call_tool("changing__grow", {})
    await heard_then(heard, mark, TOOLS_CHANGED, _true)


def _updates(heard: list[Any]) -> int:
    return sum(1 for note in heard if method_of(note) == UPDATED)


async def test_an_update_reaches_the_http_session_subscribed_to_it_and_not_the_other(
        write_config: Any, tmp_path: Path) -> None:
    told, untold = Heard(), Heard()
    async with open_http_sidecar(write_config({"changing": session_entry()}), tmp_path) as sc:
        async with sdk_client(sc.url, sc.token, Person(), "legacy", message_handler=told) as subscribed, \
                sdk_client(sc.url, sc.token, Person(), "legacy", message_handler=untold) as other:
            await sdk_wait_for_tools(subscribed, "changing__echo")
            await sdk_wait_for_tools(other, "changing__echo")
            await subscribed.subscribe_resource(COUNTER)
            with anyio.fail_after(30):
                await other.call_tool("changing__bump", {})
            updated = await heard_then(told.notes, 0, UPDATED, _true)
            await _marker(other, untold.notes)
    assert str(updated.params.uri) == COUNTER
    assert _updates(untold.notes) == 0


async def test_one_sessions_unsubscribe_does_not_end_anothers_updates(write_config: Any, tmp_path: Path) -> None:
    events = tmp_path / "changing.jsonl"
    first_heard, second_heard = Heard(), Heard()
    async with open_http_sidecar(write_config({"changing": session_entry(events)}), tmp_path) as sc:
        async with sdk_client(sc.url, sc.token, Person(), "legacy", message_handler=first_heard) as first, \
                sdk_client(sc.url, sc.token, Person(), "legacy", message_handler=second_heard) as second:
            await sdk_wait_for_tools(first, "changing__echo")
            for client in (first, second):
                await client.subscribe_resource(COUNTER)
            await first.unsubscribe_resource(COUNTER)
            with anyio.fail_after(30):
                await first.call_tool("changing__bump", {})
            await heard_then(second_heard.notes, 0, UPDATED, _true)
            await _marker(first, first_heard.notes)
            unsubscribed_upstream = [e for e in read_event_file(events) if e["event"] == "unsubscribe"]
            await second.unsubscribe_resource(COUNTER)  # the last one asking: now the upstream hears it
            last = [e for e in read_event_file(events) if e["event"] == "unsubscribe"]
    assert _updates(first_heard.notes) == 0
    assert unsubscribed_upstream == [] and [e["uri"] for e in last] == [COUNTER]


async def test_a_stdio_engine_hears_updates_only_while_subscribed(write_config: Any, sidecar_client: Any) -> None:
    async with sidecar_client(write_config({"changing": session_entry()})) as c:
        await c.wait_for_tools({"changing__echo"})
        heard = c.notifications
        for subscribed in (False, True, False):
            if subscribed:
                await c.session.subscribe_resource(COUNTER)
            elif _updates(heard):
                await c.session.unsubscribe_resource(COUNTER)
            before = _updates(heard)
            with anyio.fail_after(30):
                await c.session.call_tool("changing__bump", {})
            await _marker(c.session, heard)
            assert _updates(heard) == before + (1 if subscribed else 0), subscribed


async def test_a_closed_session_gives_back_the_subscriptions_only_it_held(write_config: Any, tmp_path: Path) -> None:
    events = tmp_path / "changing.jsonl"

    def unsubscribed() -> list[str]:
        return [e["uri"] for e in read_event_file(events) if e["event"] == "unsubscribe"]

    async with open_http_sidecar(write_config({"changing": session_entry(events)}), tmp_path) as sc:
        async with sdk_client(sc.url, sc.token, Person(), "legacy") as staying:
            await sdk_wait_for_tools(staying, "changing__echo")
            await staying.subscribe_resource(COUNTER)
            async with sdk_client(sc.url, sc.token, Person(), "legacy") as leaving:
                await leaving.subscribe_resource(COUNTER)
            # the leaving session is closed (its DELETE answered): the staying one still asks
            with anyio.fail_after(30):
                await staying.call_tool("changing__echo", {"nonce": "still here"})
            assert unsubscribed() == []
        await await_event(events, lambda e: e["event"] == "unsubscribe" and e["uri"] == COUNTER,
                          what="the last session's subscription given back upstream")
    assert unsubscribed() == [COUNTER]
