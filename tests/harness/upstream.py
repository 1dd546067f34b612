"""In-memory upstream MCP servers, scripted per test: the upstream side of the harness.

A `FakeServer` stands where a child process or a URL server would be. The pool opens it
through the channel opener (`FakeServer.open`), once per start, so a restart is a fresh
`FakeChannel` on the same server. The server answers the handshake and the list reads
itself, from what the test gave it (tools, prompts, resources); every `tools/call` is
handed to the test as a `ScriptedCall` to answer, fail, hang on, report progress for, or
ask the engine something from. A test may also make the server die, change its tools,
send any line (garbage included), refuse to start, or end a request or the whole start
with any of the four transport faults (`fault_call`, `die(kind=...)`), as a real
transport reports them through the channel seam.

Frames from the server reach the sidecar on a later loop turn, in order, as bytes from a
real transport would; nothing here sleeps or touches a socket.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from sidecar.config import ServerConfig
from sidecar.errors import UpstreamUnavailable
from sidecar.upstream.channel import Inbox, Outgoing

__all__ = ["FakeChannel", "FakeServer", "ScriptedCall", "echo", "tool"]

WAIT = 5.0  # seconds any single expectation may take before the test fails


def tool(name: str, description: str = "", **properties: Any) -> dict[str, Any]:
    """A tool definition whose input schema has `properties` (each a JSON schema)."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    return {"name": name, "description": description or f"the {name} tool", "inputSchema": schema}


def text_result(text: str, is_error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


class ScriptedCall:
    """One `tools/call` the sidecar sent: the test decides what becomes of it."""

    def __init__(self, channel: FakeChannel, ident: int | str, params: dict[str, Any]) -> None:
        self.channel = channel
        self.id = ident
        self.params = params
        self.name: str = params.get("name", "")
        self.arguments: dict[str, Any] = params.get("arguments") or {}
        meta = params.get("_meta")
        self.progress_token = meta.get("progressToken") if isinstance(meta, dict) else None
        self.cancelled = asyncio.Event()
        self.cancel_reason: str | None = None

    def answer(self, text: str | None = None, *, result: Any = None, is_error: bool = False) -> None:
        """Answer with `text` as one text block, or with `result` as it is."""
        self.channel.emit({"jsonrpc": "2.0", "id": self.id,
                           "result": result if result is not None else text_result(text or "", is_error)})

    def fail(self, code: int, message: str, data: Any = None) -> None:
        """Answer with a JSON-RPC error (the upstream's own code and words)."""
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self.channel.emit({"jsonrpc": "2.0", "id": self.id, "error": error})

    def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Report progress under the token the sidecar put in this call."""
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self.channel.emit({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})

    async def ask(self, method: str, params: Any = None) -> dict[str, Any]:
        """Send a request to the client (sampling, elicitation, roots) and await its answer frame."""
        return await self.channel.server.ask(method, params)

    def fault(self, fault: UpstreamUnavailable) -> None:
        """The transport could not carry this call (an HTTP 500, a body over its cap, ...)."""
        self.channel.fault_request(self.id, fault)

    async def until_cancelled(self) -> str | None:
        """Wait for the sidecar's `notifications/cancelled` for this call; its reason."""
        async with asyncio.timeout(WAIT):
            await self.cancelled.wait()
        return self.cancel_reason


class FakeChannel:
    """One start of a fake server: the `Channel` the supervisor reads and writes."""

    def __init__(self, server: FakeServer, inbox: Inbox) -> None:
        self.server = server
        self._inbox = inbox
        self._loop = asyncio.get_running_loop()
        self._gone: asyncio.Future[None] = self._loop.create_future()
        self.end: UpstreamUnavailable = UpstreamUnavailable("stopped")
        self.stopped = False

    # -- the Channel protocol -------------------------------------------------------

    @property
    def gone(self) -> asyncio.Future[None]:
        return self._gone

    def send(self, message: Outgoing) -> None:
        if not self._gone.done():  # read from its bytes, as a real server reads them
            self._loop.call_soon(self.server.receive, self, json.loads(message.frame))

    async def stop(self) -> None:
        self.stopped = True
        self._end(UpstreamUnavailable("stopped"))

    def ended(self) -> UpstreamUnavailable:
        return self.end

    def diagnostics(self) -> str:
        return ""

    # -- the server's side ----------------------------------------------------------

    def emit(self, frame: dict[str, Any]) -> None:
        self.send_line(json.dumps(frame).encode())

    def send_line(self, line: bytes) -> None:
        """Any bytes as one line toward the sidecar (garbage too), on a later loop turn."""
        if not self._gone.done():
            self._loop.call_soon(self._deliver, line)

    def _deliver(self, line: bytes) -> None:
        if not self._gone.done():
            self._inbox.feed(line)

    def fault_request(self, ident: int | str, fault: UpstreamUnavailable) -> None:
        """Request `ident` could not be carried: reported up on a later loop turn."""
        if not self._gone.done():
            self._loop.call_soon(self._inbox.fault, ident, fault)

    def _end(self, fault: UpstreamUnavailable) -> None:
        if not self._gone.done():
            self.end = fault
            self._gone.set_result(None)


class FakeServer:
    """A scripted upstream. `tools` are listed as given; `answers_initialize=False` makes
    it hold the handshake (until `finish_start`, or for ever); `refuse_start` makes every start fail with those words;
    `on_call`, when set, answers each call itself (else the test takes them with
    `expect_call`); `answers` serves any other method (`resources/read`, `prompts/get`,
    `completion/complete`, ...) from its params; what it does not serve is -32601;
    `capabilities` are declared in its handshake beside those the rest implies; a method
    in `faults` is ended by the transport with that fault instead of being answered."""

    def __init__(
        self,
        tools: list[dict[str, Any]] | None = None,
        *,
        prompts: list[dict[str, Any]] | None = None,
        resources: list[dict[str, Any]] | None = None,
        templates: list[dict[str, Any]] | None = None,
        answers: dict[str, Callable[[dict[str, Any]], Any]] | None = None,
        answers_initialize: bool = True,
        refuse_start: str | UpstreamUnavailable | None = None,
        on_call: Callable[[ScriptedCall], None] | None = None,
        name: str = "fake",
        capabilities: dict[str, Any] | None = None,
    ) -> None:
        self.tools = list(tools if tools is not None else [tool("echo", text={"type": "string"})])
        self.prompts, self.resources, self.templates = prompts, resources, templates
        self.answers = dict(answers or {})  # method -> params -> result, for anything else it serves
        self.faults: dict[str, UpstreamUnavailable] = {}  # method -> the fault its transport ends it with
        self.answers_initialize, self.refuse_start = answers_initialize, refuse_start
        self.on_call = on_call
        self.name = name
        self.extra_capabilities = dict(capabilities or {})  # declared beside those its lists imply (`logging`...)
        self.channels: list[FakeChannel] = []  # one per start, the live one last
        self.received: list[dict[str, Any]] = []  # every frame the sidecar sent, across starts
        self._calls: asyncio.Queue[ScriptedCall] = asyncio.Queue()
        self._live_calls: dict[tuple[int, int | str], ScriptedCall] = {}
        self._asked: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._asks = 0
        self._started = asyncio.Event()
        self._held_initialize: tuple[FakeChannel, int | str] | None = None
        self._holding = asyncio.Event()

    # -- the opener the pool calls ----------------------------------------------------

    async def open(self, server: ServerConfig, inbox: Inbox) -> FakeChannel:
        if isinstance(self.refuse_start, UpstreamUnavailable):
            raise self.refuse_start
        if self.refuse_start is not None:
            raise UpstreamUnavailable(self.refuse_start)
        channel = FakeChannel(self, inbox)
        self.channels.append(channel)
        self._started.set()
        return channel

    @property
    def channel(self) -> FakeChannel:
        assert self.channels, f"upstream {self.name!r} was never started"
        return self.channels[-1]

    @property
    def starts(self) -> int:
        return len(self.channels)

    # -- what the test scripts ----------------------------------------------------------

    async def expect_call(self, name: str | None = None) -> ScriptedCall:
        """The next `tools/call` the sidecar sends here (of tool `name`, if given)."""
        async with asyncio.timeout(WAIT):
            call = await self._calls.get()
        assert name is None or call.name == name, f"expected a call of {name!r}, got {call.name!r}"
        return call

    def finish_start(self) -> None:
        """Answer the handshake held back (`answers_initialize=False`): the start goes on."""
        assert self._held_initialize is not None, "no handshake is being held"
        channel, ident = self._held_initialize
        self._held_initialize, self.answers_initialize = None, True
        channel.emit({"jsonrpc": "2.0", "id": ident, "result": self._initialize()})

    async def handshake_held(self) -> None:
        """Wait until the sidecar's `initialize` is here and being held."""
        async with asyncio.timeout(WAIT):
            await self._holding.wait()

    def pending_calls(self) -> int:
        return self._calls.qsize()

    def die(self, words: str = "stopped (exit code -9)", kind: type[UpstreamUnavailable] = UpstreamUnavailable) -> None:
        """The live start ends now, as a crashed child does (or with another kind of fault)."""
        self.channel._end(kind(words))

    def change_tools(self, tools: list[dict[str, Any]], announce: bool = True) -> None:
        """List `tools` from now on; tell the sidecar with list_changed unless `announce` is False."""
        self.tools = list(tools)
        if announce:
            self.channel.emit({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})

    def notify(self, method: str, params: Any = None) -> None:
        frame: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            frame["params"] = params
        self.channel.emit(frame)

    async def ask(self, method: str, params: Any = None) -> dict[str, Any]:
        """Send a request to the client and await the answer frame (result or error)."""
        self._asks += 1
        ident = f"ask-{self._asks}"
        waiting = self._asked[ident] = asyncio.get_running_loop().create_future()
        frame: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
        if params is not None:
            frame["params"] = params
        self.channel.emit(frame)
        async with asyncio.timeout(WAIT):
            return await waiting

    async def sync(self) -> None:
        """A barrier: once the sidecar answers this ping, everything this server sent
        before it has been read by the sidecar."""
        answer = await self.ask("ping")
        assert answer.get("result") == {}, answer

    async def wait_started(self, starts: int = 1, within: float = WAIT) -> FakeChannel:
        """Wait, at most `within` seconds, until the pool has opened this server `starts` times in all."""
        async with asyncio.timeout(within):
            while self.starts < starts:
                self._started.clear()
                await self._started.wait()
        return self.channel

    def frames(self, method: str) -> list[dict[str, Any]]:
        """Every frame of `method` the sidecar sent here, across starts."""
        return [f for f in self.received if f.get("method") == method]

    # -- what the server does by itself ------------------------------------------------

    def receive(self, channel: FakeChannel, frame: dict[str, Any]) -> None:
        self.received.append(frame)
        method, ident = frame.get("method"), frame.get("id")
        if method is None:
            waiting = self._asked.pop(str(ident), None)
            if waiting is not None and not waiting.done():
                waiting.set_result(frame)
        elif ident is None:
            self._notification(channel, method, frame.get("params") or {})
        else:
            self._request(channel, ident, method, frame.get("params") or {})

    def _notification(self, channel: FakeChannel, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/cancelled":
            call = self._live_calls.pop((id(channel), params.get("requestId")), None)
            if call is not None:
                call.cancel_reason = params.get("reason")
                call.cancelled.set()

    def _request(self, channel: FakeChannel, ident: int | str, method: str, params: dict[str, Any]) -> None:
        if method in self.faults:
            channel.fault_request(ident, self.faults[method])
            return
        if method == "tools/call":
            call = self._live_calls[(id(channel), ident)] = ScriptedCall(channel, ident, params)
            if self.on_call is not None:
                self.on_call(call)
            else:
                self._calls.put_nowait(call)
            return
        if method == "initialize" and not self.answers_initialize:
            self._held_initialize = (channel, ident)  # answered by `finish_start`, if ever
            self._holding.set()
            return
        result = self.answers[method](params) if method in self.answers else self._answer(method)
        if result is None:
            channel.emit({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": f"no {method}"}})
        else:
            channel.emit({"jsonrpc": "2.0", "id": ident, "result": result})

    def _answer(self, method: str) -> dict[str, Any] | None:
        answers: dict[str, Callable[[], dict[str, Any]]] = {
            "initialize": self._initialize,
            "ping": dict,
            "tools/list": lambda: {"tools": self.tools},
            "prompts/list": lambda: {"prompts": self.prompts or []},
            "resources/list": lambda: {"resources": self.resources or []},
            "resources/templates/list": lambda: {"resourceTemplates": self.templates or []},
        }
        make = answers.get(method)
        return make() if make is not None else None

    def _initialize(self) -> dict[str, Any]:
        capabilities: dict[str, Any] = {"tools": {"listChanged": True}}
        if self.prompts is not None:
            capabilities["prompts"] = {"listChanged": True}
        if self.resources is not None:
            capabilities["resources"] = {"listChanged": True, "subscribe": "resources/subscribe" in self.answers}
        if "completion/complete" in self.answers:
            capabilities["completions"] = {}
        capabilities.update(self.extra_capabilities)
        return {"protocolVersion": "2025-06-18", "capabilities": capabilities,
                "serverInfo": {"name": self.name, "version": "0"}}


def echo(call: ScriptedCall) -> None:
    """An `on_call` that answers every call with its `text` argument (or its tool name)."""
    call.answer(str(call.arguments.get("text", call.name)))
