"""Issue 24, `notifications/elicitation/complete` across eras. A session-era server (the
`mcp` SDK's low-level server on stdio, tests/eras/changing_server.py `url_done`) asks a
URL-mode elicitation, then says it completed. A session-era engine, on stdio or an HTTP
session, gets the notice on its session, and another session never does. A 2026-07-28
engine has no carrier for it (its URL elicitations carry no id; neither its listen stream
nor its call's rounds take the notice): its call still ends as it should, and the notice
goes nowhere."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.eras.changing_support import Heard, heard_then, session_entry
from tests.eras.eras_support import MODERN, Person, said, sdk_client, sdk_wait_for_tools
from tests.http.http_support import open_http_sidecar

pytestmark = pytest.mark.e2e

COMPLETE = "notifications/elicitation/complete"


async def _true() -> bool:
    return True


async def test_the_completion_reaches_the_http_session_that_was_asked_and_no_other(write_config,
                                                                                  tmp_path: Path) -> None:
    asked_heard, other_heard = Heard(), Heard()
    person = Person()
    async with open_http_sidecar(write_config({"changing": session_entry()}), tmp_path) as sc:
        async with sdk_client(sc.url, sc.token, person, "legacy", message_handler=asked_heard) as asked, \
                sdk_client(sc.url, sc.token, Person(), "legacy", message_handler=other_heard) as other:
            await sdk_wait_for_tools(asked, "changing__url_done")
            await sdk_wait_for_tools(other, "changing__url_done")
            with anyio.fail_after(30):
                result = said(await asked.call_tool("changing__url_done", {}))
            done = await heard_then(asked_heard.notes, 0, COMPLETE, _true)
            mark = len(other_heard.notes)
            await other.call_tool("changing__grow_tools", {})  # news both sessions get, after the completion
            await heard_then(other_heard.notes, mark, "notifications/tools/list_changed", _true)
    assert result == "url_done:accept" and person.asked[0][1].elicitation_id == "elicit-7"
    assert done.params.elicitation_id == "elicit-7"
    assert COMPLETE not in [getattr(note, "method", None) for note in other_heard.notes]


async def test_the_completion_reaches_a_stdio_engine(write_config, sidecar_client, tmp_path: Path) -> None:
    person = Person()
    async with sidecar_client(write_config({"changing": session_entry()}), elicitation=person.elicit) as c:
        await c.wait_for_tools({"changing__url_done"})
        with anyio.fail_after(30):
            result = said(await c.session.call_tool("changing__url_done", {}))
        done = await heard_then(c.notifications, 0, COMPLETE, _true)
    assert result == "url_done:accept" and done.params.elicitation_id == "elicit-7"


async def test_a_stateless_engine_answers_the_url_question_and_the_notice_has_no_carrier(write_config,
                                                                                          tmp_path: Path) -> None:
    person = Person()
    async with open_http_sidecar(write_config({"changing": session_entry()}), tmp_path) as sc:
        async with sdk_client(sc.url, sc.token, person, MODERN) as client:
            await sdk_wait_for_tools(client, "changing__url_done")
            with anyio.fail_after(30):
                async with client.listen(tools_list_changed=True) as sub:
                    result = said(await client.call_tool("changing__url_done", {}))
                    await client.call_tool("changing__grow_tools", {})
                    event = await anext(sub)
    assert result == "url_done:accept" and [kind for kind, _ in person.asked] == ["elicit"]
    assert person.asked[0][1].mode == "url"
    assert type(event).__name__ == "ToolsListChanged"  # the listen stream serves on after the notice fell
