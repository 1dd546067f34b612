"""The engine side of the harness: frames in through the dispatcher, frames out as dicts.

`FakeEngine` is one engine session on the face. A test sends frames (`send`, `request`,
`call`, `notify`, `respond`) and awaits what the sidecar sends back (`expect`,
`answer_to`), playbook fashion. What the session hands the engine is turned into dicts
in one place, `SessionWire`: when the session's outgoing seam changes shape (bytes
today), only that class follows it.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from typing import Any

from sidecar.concurrency import Jobs
from sidecar.front import Dispatcher
from sidecar.hub import EngineSession, Face
from sidecar.redact import Redactor

__all__ = ["FakeEngine", "SessionWire"]

WAIT = 5.0
Frame = dict[str, Any]


class SessionWire:
    """The adapter between the session's outgoing seam and the test: builds the session
    and delivers each frame it sends, decoded, to `deliver`."""

    def __init__(self, deliver: Callable[[Frame], None], admit: Callable[[str | None], bool] | None = None) -> None:
        self._deliver = deliver
        self.session = EngineSession(self._sent, admit) if admit is not None else EngineSession(self._sent)

    def _sent(self, frame: bytes) -> None:
        self._deliver(json.loads(frame))


class FakeEngine:
    """One engine session driven by the test."""

    def __init__(self, face: Face, redactor: Redactor | None = None,
                 admit: Callable[[str | None], bool] | None = None) -> None:
        self.face = face
        self.frames: list[Frame] = []  # everything the sidecar sent this engine, in order
        self._taken: set[int] = set()  # indexes of frames an `expect` already returned
        self._arrived = asyncio.Event()
        self.wire = SessionWire(self._received, admit)
        self.session = self.wire.session
        self.jobs = Jobs()
        self.dispatcher = Dispatcher(face, self.session, self.jobs.spawn, redactor, finds_held=True)
        self.jobs.hold_from(self.dispatcher)  # as stdio's session owns its plain calls
        self._ids = itertools.count(1)
        face.sessions.append(self.session)

    def _received(self, frame: Frame) -> None:
        self.frames.append(frame)
        self._arrived.set()

    # -- frames in ----------------------------------------------------------------------

    def send(self, frame: Frame | bytes) -> None:
        self.dispatcher.feed(frame if isinstance(frame, bytes) else json.dumps(frame).encode())

    def request(self, method: str, params: Any = None, id: int | str | None = None) -> int | str:
        ident = f"h{next(self._ids)}" if id is None else id  # never one a test picks: those are its own
        frame: Frame = {"jsonrpc": "2.0", "id": ident, "method": method}
        if params is not None:
            frame["params"] = params
        self.send(frame)
        return ident

    def call(self, name: str, arguments: dict[str, Any] | None = None, *, id: int | str | None = None,
             meta: dict[str, Any] | None = None) -> int | str:
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        if meta is not None:
            params["_meta"] = meta
        return self.request("tools/call", params, id)

    def notify(self, method: str, params: Any = None) -> None:
        frame: Frame = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            frame["params"] = params
        self.send(frame)

    def respond(self, ident: int | str, result: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": ident, "result": result})

    def cancel(self, ident: int | str, reason: str = "") -> None:
        self.notify("notifications/cancelled", {"requestId": ident, "reason": reason})

    # -- frames out ---------------------------------------------------------------------

    async def expect(self, match: Callable[[Frame], bool], what: str = "a frame", within: float = WAIT) -> Frame:
        """The first frame not yet expected that `match`es, waiting at most `within` seconds for it."""
        async with asyncio.timeout(within):
            while True:
                for index, frame in enumerate(self.frames):
                    if index not in self._taken and match(frame):
                        self._taken.add(index)
                        return frame
                self._arrived.clear()
                await self._arrived.wait()
        raise AssertionError(f"no {what}")  # pragma: no cover (the timeout raises first)

    async def answer_to(self, ident: int | str, within: float = WAIT) -> Frame:
        return await self.expect(lambda f: f.get("id") == ident and "method" not in f, f"answer to {ident!r}", within)

    async def expect_request(self, method: str) -> Frame:
        """A request the sidecar relays to the engine (sampling, elicitation, roots)."""
        return await self.expect(lambda f: f.get("method") == method and "id" in f, f"{method} request")

    async def expect_notification(self, method: str) -> Frame:
        return await self.expect(lambda f: f.get("method") == method and "id" not in f, method)

    async def roundtrip(self, method: str = "tools/list", params: Any = None) -> Frame:
        """Send a request and await its answer; the answer frame."""
        return await self.answer_to(self.request(method, params))

    async def call_and_wait(self, name: str, arguments: dict[str, Any] | None = None, *, within: float = WAIT,
                            **how: Any) -> Frame:
        return await self.answer_to(self.call(name, arguments, **how), within)

    def answers_to(self, ident: int | str) -> list[Frame]:
        return [f for f in self.frames if f.get("id") == ident and "method" not in f]

    def notifications(self, method: str) -> list[Frame]:
        return [f for f in self.frames if f.get("method") == method and "id" not in f]

    async def initialize(self, capabilities: dict[str, Any] | None = None) -> Frame:
        answer = await self.roundtrip("initialize", {"protocolVersion": "2025-06-18",
                                                     "capabilities": capabilities or {},
                                                     "clientInfo": {"name": "harness", "version": "0"}})
        self.notify("notifications/initialized")
        return answer

    async def tool_names(self) -> list[str]:
        answer = await self.roundtrip("tools/list")
        return [t["name"] for t in answer["result"]["tools"]]

    async def aclose(self) -> None:
        await self.jobs.aclose()
        if self.session in self.face.sessions:
            self.face.sessions.remove(self.session)


def text_of(answer: Frame) -> str:
    """The text blocks of a `tools/call` answer, joined."""
    return "".join(block.get("text", "") for block in answer["result"]["content"])
