"""List changes in memory: the engine is told `list_changed` when what it sees changes,
and only then (SPEC §3)."""

from __future__ import annotations

import pytest

from tests.harness import FakeServer, echo, in_memory, text_of, tool

WARN = {"f": {"pinning": "warn"}}  # a new tool is listed at once, not held for review


async def test_a_changed_tool_list_is_reread_announced_once_and_callable() -> None:
    server = FakeServer([tool("echo")], on_call=echo)
    async with in_memory({"f": server}, entries=WARN) as sidecar:
        engine = await sidecar.engine()
        changed = sidecar.next_change()
        server.change_tools([tool("echo"), tool("brand_new")])
        await changed
        await engine.expect_notification("notifications/tools/list_changed")
        assert "f__brand_new" in await engine.tool_names()
        assert text_of(await engine.call_and_wait("f__brand_new", {"text": "z"})) == "z"
        assert len(engine.notifications("notifications/tools/list_changed")) == 1
        assert engine.notifications("notifications/prompts/list_changed") == []


async def test_an_announced_change_that_changes_nothing_is_not_passed_on() -> None:
    server = FakeServer([tool("echo")])
    async with in_memory({"f": server}, entries=WARN) as sidecar:
        engine = await sidecar.engine()
        changed = sidecar.next_change()
        server.change_tools([tool("echo")])
        await changed
        await engine.roundtrip("ping")
        assert len(server.frames("tools/list")) == 2  # it was re-read
        assert engine.notifications("notifications/tools/list_changed") == []


async def test_a_change_to_tools_the_bot_may_not_use_is_not_passed_on() -> None:
    server = FakeServer([tool("echo")])
    async with in_memory({"f": server}, entries=WARN, grants={"deny": ["f__secret_*"]}) as sidecar:
        engine = await sidecar.engine()
        changed = sidecar.next_change()
        server.change_tools([tool("echo"), tool("secret_export")])
        await changed
        await engine.roundtrip("ping")
        assert engine.notifications("notifications/tools/list_changed") == []
        assert "f__secret_export" not in await engine.tool_names()


async def _prompt_change(entries: dict[str, dict[str, str]]) -> None:
    server = FakeServer([tool("echo")], prompts=[{"name": "greet"}])
    async with in_memory({"f": server}, entries=entries) as sidecar:
        engine = await sidecar.engine()
        changed = sidecar.next_change()
        server.prompts = [{"name": "greet"}, {"name": "farewell"}]
        server.notify("notifications/prompts/list_changed")
        await changed  # the face has rebuilt: whatever it says is said by now
        assert len(engine.notifications("notifications/prompts/list_changed")) == 1
        assert engine.notifications("notifications/tools/list_changed") == []
        answer = await engine.roundtrip("prompts/list")
        assert [p["name"] for p in answer["result"]["prompts"]] == ["f__greet", "f__farewell"]


async def test_a_prompt_change_says_prompts_only() -> None:
    await _prompt_change({"f": {"pinning": "off"}})


async def test_a_prompt_change_reaches_the_engine_with_pinning_on() -> None:
    await _prompt_change(WARN)


@pytest.mark.looptime
async def test_an_upstream_back_from_a_crash_with_the_same_tools_changes_nothing_the_engine_sees() -> None:
    server = FakeServer([tool("echo")], on_call=echo)
    async with in_memory({"f": server}) as sidecar:
        engine = await sidecar.engine()
        server.die()
        await sidecar.state_of("f", "restarting")
        await sidecar.state_of("f", "ready")
        assert text_of(await engine.call_and_wait("f__echo", {"text": "back"})) == "back"
        assert engine.notifications("notifications/tools/list_changed") == []


@pytest.mark.looptime
async def test_an_upstream_that_comes_back_with_other_tools_is_announced() -> None:
    server = FakeServer([tool("echo")], on_call=echo)
    async with in_memory({"f": server}, entries=WARN) as sidecar:
        engine = await sidecar.engine()
        server.tools = [tool("echo"), tool("added_while_down")]
        server.die()
        await sidecar.state_of("f", "restarting")
        await sidecar.state_of("f", "ready")
        await engine.expect_notification("notifications/tools/list_changed")
        assert "f__added_while_down" in await engine.tool_names()
