"""A tiny raw JSON-lines MCP client that times what it does.

Owns one stdio connection to a spawned MCP server: spawn, initialize, list
tools until the catalog is complete, sequential calls, pipelined calls with
distinct ids, and shutdown of the process group it started. It decodes only
the envelope of each reply (msgspec, `result` kept raw), so its own cost stays
small and equal for every candidate; the MCP SDK client is deliberately not
used for timing.

Refuses to guess: a JSON-RPC error reply or a closed pipe raises
`ConnectionFailed` with the tail of the server's stderr.
"""

from __future__ import annotations

import itertools
import os
import select
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Self

import msgspec

__all__ = ["Connection", "ConnectionFailed", "echo_request", "find_tool"]

_PROTOCOL = "2025-06-18"
_READ_CHUNK = 1 << 20
# a proxy that never says list_changed is re-polled this often (seconds)
_REPOLL = 0.05


class ConnectionFailed(Exception):
    """The server broke the exchange: error reply, bad JSON, EOF or timeout."""


class Incoming(msgspec.Struct):
    id: int | str | None = None
    method: str | None = None
    result: msgspec.Raw = msgspec.Raw(b"")
    error: msgspec.Raw = msgspec.Raw(b"")


class ToolName(msgspec.Struct):
    name: str


class ToolsPage(msgspec.Struct):
    tools: list[ToolName]
    nextCursor: str | None = None


_decode_incoming = msgspec.json.Decoder(Incoming).decode
_decode_page = msgspec.json.Decoder(ToolsPage).decode
_encode = msgspec.json.Encoder().encode


def echo_request(tool: str) -> Callable[[int], bytes]:
    """A builder of `tools/call` lines for the echo tool, one per request id."""
    head = b'{"jsonrpc":"2.0","id":'
    tail = b',"method":"tools/call","params":{"name":' + _encode(tool) + b',"arguments":{"text":"ping '
    return lambda i: head + str(i).encode() + tail + str(i).encode() + b'"}}}\n'


def find_tool(names: Sequence[str], bare: str, alias: str = "") -> str:
    """The listed name of upstream tool `bare`, whatever prefix the proxy added."""
    listed = set(names)
    for guess in (f"{alias}__{bare}", f"{alias}_{bare}", bare):
        if guess in listed:
            return guess
    for name in names:
        if name.endswith(("__" + bare, "_" + bare)):
            return name
    raise ConnectionFailed(f"no tool named like {bare!r} among {len(names)} listed")


def _spawn(argv: Sequence[str], env: dict[str, str] | None, cwd: str | None,
           stderr_path: Path | None) -> subprocess.Popen[bytes]:
    """Start `argv` in its own process group, pipes on stdin/stdout, stderr to a file."""
    def start(stderr: int | IO[bytes]) -> subprocess.Popen[bytes]:
        return subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=stderr, env=env, cwd=cwd, start_new_session=True, bufsize=0)
    if stderr_path is None:
        return start(subprocess.DEVNULL)
    with open(stderr_path, "ab") as stderr:
        return start(stderr)


class Connection:
    """One spawned server and the newline-delimited JSON-RPC exchange with it."""

    def __init__(self, argv: Sequence[str], *, env: dict[str, str] | None = None,
                 cwd: str | None = None, stderr_path: Path | None = None) -> None:
        self._stderr_path = stderr_path
        self.started = time.perf_counter()
        self.process = _spawn(argv, env, cwd, stderr_path)
        assert self.process.stdin is not None and self.process.stdout is not None
        self._in = self.process.stdin.fileno()
        self._out = self.process.stdout.fileno()
        self._buffer = bytearray()
        self._scanned = 0
        self._ids = itertools.count(1)
        self.list_changed = 0
        self.list_bytes = 0

    @property
    def pid(self) -> int:
        return self.process.pid

    # -- bytes -------------------------------------------------------------

    def send(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._in, view):]
        except (BrokenPipeError, OSError) as exc:
            raise self._failed(f"write failed: {exc}") from exc

    def _line(self, deadline: float) -> bytes:
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                self._scanned = 0
                return line
            self._scanned = len(self._buffer)
            self._fill(deadline)

    def _fill(self, deadline: float) -> None:
        remaining = deadline - time.perf_counter()
        if remaining <= 0 or not select.select([self._out], [], [], remaining)[0]:
            raise self._failed("timed out waiting for a reply")
        chunk = os.read(self._out, _READ_CHUNK)
        if not chunk:
            raise self._failed("server closed its stdout")
        self._buffer += chunk

    # -- messages ----------------------------------------------------------

    def receive(self, deadline: float) -> Incoming:
        """The next reply; server notifications are counted, server requests answered."""
        while True:
            message = self._message(deadline)
            if message.method is None:
                return message

    def _message(self, deadline: float) -> Incoming:
        line = b""
        while not line.strip():
            line = self._line(deadline)
        try:
            message = _decode_incoming(line)
        except msgspec.DecodeError as exc:
            raise self._failed(f"bad JSON from server: {line[:120]!r}") from exc
        if message.method is not None:
            self._on_server_message(message)
        return message

    def _on_server_message(self, message: Incoming) -> None:
        if message.method == "notifications/tools/list_changed":
            self.list_changed += 1
        if message.id is None:
            return
        if message.method == "ping":
            body: dict[str, object] = {"result": {}}
        elif message.method == "roots/list":
            body = {"result": {"roots": []}}
        else:
            body = {"error": {"code": -32601, "message": "not supported by the bench client"}}
        self.send(_encode({"jsonrpc": "2.0", "id": message.id, **body}) + b"\n")

    def request(self, method: str, params: object = None, timeout: float = 30.0) -> msgspec.Raw:
        """Send one request and wait for its reply; returns the raw `result`."""
        rid = next(self._ids)
        body: dict[str, object] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            body["params"] = params
        self.send(_encode(body) + b"\n")
        return self._reply_to(rid, time.perf_counter() + timeout)

    def _reply_to(self, rid: int | str, deadline: float) -> msgspec.Raw:
        while True:
            message = self.receive(deadline)
            if message.id != rid:
                continue
            if message.error:
                raise self._failed(f"error reply: {bytes(message.error)[:300]!r}")
            return message.result

    def notify(self, method: str) -> None:
        self.send(_encode({"jsonrpc": "2.0", "method": method}) + b"\n")

    # -- MCP steps ---------------------------------------------------------

    def initialize(self, timeout: float = 30.0) -> float:
        """Handshake; returns seconds from spawn to the `initialize` reply."""
        self.request("initialize", {
            "protocolVersion": _PROTOCOL, "capabilities": {},
            "clientInfo": {"name": "omb-bench", "version": "1.0"}}, timeout)
        elapsed = time.perf_counter() - self.started
        self.notify("notifications/initialized")
        return elapsed

    def list_tools(self, timeout: float = 30.0) -> list[str]:
        """One full `tools/list`, following `nextCursor` pages."""
        names: list[str] = []
        params: dict[str, str] | None = None
        size = 0
        while True:
            raw = self.request("tools/list", params, timeout)
            page = _decode_page(raw)
            size += len(raw)
            names += [tool.name for tool in page.tools]
            if not page.nextCursor:
                self.list_bytes = size
                return names
            params = {"cursor": page.nextCursor}

    def list_tools_until(self, expected: int, timeout: float = 60.0) -> list[str]:
        """Poll `tools/list` until it holds `expected` tools (late upstreams arrive)."""
        deadline = time.perf_counter() + timeout
        while True:
            names = self.list_tools(timeout)
            if len(names) >= expected:
                return names
            if time.perf_counter() > deadline:
                raise self._failed(f"tools/list stuck at {len(names)} of {expected} tools")
            self._wait_for_change(min(deadline, time.perf_counter() + _REPOLL))

    def _wait_for_change(self, until: float) -> None:
        """Read messages until a `list_changed` arrives or `until` passes."""
        seen = self.list_changed
        while self.list_changed == seen:
            if b"\n" not in self._buffer:
                remaining = until - time.perf_counter()
                if remaining <= 0 or not select.select([self._out], [], [], remaining)[0]:
                    return
            self._message(until + 5.0)  # replies read here answer nothing pending

    def call(self, tool: str, arguments: dict[str, object], timeout: float = 120.0) -> msgspec.Raw:
        return self.request("tools/call", {"name": tool, "arguments": arguments}, timeout)

    def sequential(self, build: Callable[[int], bytes], count: int, cap_s: float = 1e9,
                   minimum: int = 1, timeout: float = 30.0) -> list[float]:
        """Up to `count` one-at-a-time calls; returns each round trip in seconds.

        Stops early once `cap_s` has passed and at least `minimum` calls are done,
        so a slow peer costs bounded time instead of hours.
        """
        times: list[float] = []
        clock = time.perf_counter
        stop = clock() + cap_s
        for n in range(count):
            rid = next(self._ids)
            start = clock()
            self.send(build(rid))
            self._reply_to(rid, start + timeout)
            end = clock()
            times.append(end - start)
            if end > stop and n + 1 >= minimum:
                break
        return times

    def pipelined(self, build: Callable[[int], bytes], count: int, window: int,
                  cap_s: float = 1e9, minimum: int = 1, timeout: float = 60.0) -> tuple[int, float]:
        """Up to `count` calls with `window` in flight; returns (calls done, seconds).

        After `cap_s`, with `minimum` sent, no new calls are sent and the ones
        in flight are drained.
        """
        start = time.perf_counter()
        deadline, stop = start + timeout, start + cap_s
        sent = done = 0
        outstanding: set[int] = set()
        while done < count:
            while sent < count and len(outstanding) < window:
                if sent >= minimum and time.perf_counter() > stop:
                    count = sent  # drain what is in flight, send nothing more
                    break
                rid = next(self._ids)
                outstanding.add(rid)
                self.send(build(rid))
                sent += 1
            if not outstanding:
                break
            reply = self.receive(deadline)
            if reply.error:
                raise self._failed(f"error reply: {bytes(reply.error)[:300]!r}")
            if isinstance(reply.id, int) and reply.id in outstanding:
                outstanding.discard(reply.id)
                done += 1
        return done, time.perf_counter() - start

    # -- end ---------------------------------------------------------------

    def close(self, grace: float = 2.0) -> None:
        """Close stdin, wait briefly, then end the process group this client started."""
        if self.process.stdin and not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except OSError:
                pass
        try:
            self.process.wait(grace)
        except subprocess.TimeoutExpired:
            self._signal_group(signal.SIGTERM)
            try:
                self.process.wait(grace)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                self.process.wait(grace)
        finally:
            if self.process.stdout:
                self.process.stdout.close()

    def _signal_group(self, sig: signal.Signals) -> None:
        try:
            os.killpg(self.process.pid, sig)
        except ProcessLookupError:
            pass

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def stderr_tail(self, limit: int = 600) -> str:
        if self._stderr_path is None or not self._stderr_path.exists():
            return ""
        return self._stderr_path.read_bytes()[-limit:].decode(errors="replace")

    def _failed(self, what: str) -> ConnectionFailed:
        tail = self.stderr_tail()
        return ConnectionFailed(what + (f"; stderr: {tail.strip()}" if tail.strip() else ""))
