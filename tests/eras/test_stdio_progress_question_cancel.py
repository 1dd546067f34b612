"""Progress, a question, then the engine's cancel, for a stdio engine and a session-era
server that asks (issue 24): the call reports progress, then asks an elicitation, and the
engine cancels the call while the question is still open. Each piece reaches its side:
the progress reaches the engine under its own token; the question reaches it; the cancel
reaches the server (its call ends cancelled); the question is withdrawn toward the engine
(`notifications/cancelled` naming the id the engine was asked under); the engine gets no
answer to the cancelled call; a late answer to the withdrawn question goes nowhere, and the
same server then serves the next call and its question."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import await_event, read_event_file
from tests.eras.eras_support import era_entry

pytestmark = pytest.mark.e2e
NAME = {"action": "accept", "content": {"name": "lin"}}


async def test_progress_then_a_question_then_the_engines_cancel(raw_sidecar: Any, write_config: Any,
                                                                 tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    async with raw_sidecar(write_config({"era": era_entry(events)})) as sc:
        await sc.initialize(capabilities={"elicitation": {"form": {}}})
        await sc.wait_for_tools(["era__progress_ask"])
        call = await sc.send_request("tools/call", {"name": "era__progress_ask", "arguments": {},
                                                    "_meta": {"progressToken": "p-1"}})
        progress = await sc.notification("notifications/progress", timeout=30)
        asked = await sc.peer_request("elicitation/create", timeout=30)
        await sc.notify("notifications/cancelled", {"requestId": call, "reason": "the person gave up"})
        await await_event(events, lambda e: e["event"] == "cancelled" and e["tool"] == "progress_ask", timeout=10)
        withdrawn = await sc.wait_for(lambda f: f.get("method") == "notifications/cancelled"
                                      and f["params"].get("requestId") == asked["id"], timeout=10)
        await sc.respond(asked["id"], NAME)  # too late: nothing waits for it any more
        start = len(sc.frames)
        again = await sc.send_request("tools/call", {"name": "era__form", "arguments": {"message": "next?"}})
        second = await sc.peer_request("elicitation/create", timeout=30, start=start)
        await sc.respond(second["id"], NAME)
        answered = await sc.response(again, timeout=30)
        assert sc.responses_to(call) == []  # a cancelled request gets no answer
    assert progress["params"]["progressToken"] == "p-1" and progress["params"]["progress"] == 1
    assert asked["params"]["message"] == "Halfway: your name?"
    assert withdrawn["params"]["requestId"] == asked["id"]
    assert '"lin"' in answered["result"]["content"][0]["text"]
    assert len({e["pid"] for e in read_event_file(events)}) == 1
