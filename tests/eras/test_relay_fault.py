"""A fault while the sidecar relays a server's request (issue 24): the real session-era SDK
server (`era_server.py`, a stdio child) asks an engine whose side of the relay breaks on
that question. The one request ends with an error answer to the server, the fault is
logged by its kind only (no secret, no question text), nothing is left in the relay map,
and the same server process goes on serving the next call and the next question."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from sidecar.config import parse_config
from sidecar.hub import build_face
from sidecar.hub.face import Face
from tests.conftest import await_event, read_event_file
from tests.eras.eras_support import era_entry
from tests.harness import FakeEngine

pytestmark = pytest.mark.e2e

SECRET = "relay-secret-6f1d2a9c"
ASKING = {"elicitation": {"form": {}}}


class BreakingEngine(FakeEngine):
    """An engine whose side of the relay fails on a question that says BREAK (as a broken
    pipe or a front that cannot encode would); every other question is answered."""

    def _received(self, frame: dict[str, Any]) -> None:
        if frame.get("method") == "elicitation/create":
            if "BREAK" in frame["params"]["message"]:
                raise RuntimeError(f"the engine's side broke on {frame['params']['message']}")
            self.respond(frame["id"], {"action": "accept", "content": {"name": "ada"}})
        super()._received(frame)


@asynccontextmanager
async def real_face(tmp_path: Path, events: Path) -> AsyncIterator[Face]:
    """A face in this process over the real era server (stdio child), its pool running."""
    entry = era_entry(events, env={"ERA_TOKEN": SECRET})
    document = {"bot": {"id": "relay", "engine": "claude"}, "mcpServers": {"era": entry}}
    face = build_face(parse_config(document, {}))
    pool = asyncio.create_task(face.pool.run(), name="relay-fault pool")
    try:
        yield face
    finally:
        face.closing = True
        pool.cancel()
        await asyncio.wait([pool])


async def test_a_fault_relaying_one_question_ends_that_request_and_the_server_serves_on(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    events = tmp_path / "events.jsonl"
    caplog.set_level(logging.DEBUG, logger="sidecar")
    async with real_face(tmp_path, events) as face:
        engine = BreakingEngine(face)
        await engine.initialize(ASKING)
        await face.pool.wait_first_start("era", 30)
        assert "era__form" in await engine.tool_names()
        broken = await engine.call_and_wait("era__form", {"message": f"BREAK {SECRET}"}, within=30)
        refused = await await_event(events, lambda e: e["event"] == "refused", timeout=10)
        fine = await engine.call_and_wait("era__form", {"message": "fine"}, within=30)
        calls = [e for e in read_event_file(events) if e["event"] == "call"]
        leftover = len(engine.session.relayed)
        await engine.aclose()
    assert refused["code"] == -32603 and "could not relay elicitation/create" in refused["message"]
    assert "could not relay" in broken["error"]["message"]  # the server's own failure of that call, not a lost upstream
    assert json.loads(fine["result"]["content"][0]["text"]) == {"action": "accept", "content": {"name": "ada"}}
    assert len({e["pid"] for e in calls}) == 1 and len(calls) == 2  # one server process served both calls
    assert leftover == 0
    said = [r.getMessage() for r in caplog.records if "relaying its elicitation/create failed" in r.getMessage()]
    assert said and "RuntimeError" in said[0]
    assert SECRET not in caplog.text and "BREAK" not in said[0]
