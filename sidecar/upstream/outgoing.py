"""What URL channels need to know about the frames they carry, with no sockets here.

Owns: a peek at each outgoing frame (id, method, the name a 2026-07-28 header
mirrors), the 2026-07-28 envelope learned from the `server/discover` probe, the
delivery of server messages to the connection (one per call, arrays split, errors
scrubbed of the server's address and header values) and the error answers a channel
gives in the server's place. Refuses to pass an error from the server unscrubbed, and
any message nested past the depth limit or over a cap: the request it answered still
ends, with an error naming the limit.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import re
from collections.abc import Callable
from typing import Any

import aiohttp
import msgspec

from sidecar.errors import UpstreamUnavailable
from sidecar.upstream.channel import LineSink
from sidecar.upstream.handshake import MAX_LIST_BYTES, MODERN_VERSION
from sidecar.wire import TOO_DEEP, encode_error
from sidecar.wire.depth import too_deep
from sidecar.wire.framing import DEFAULT_LINE_CAP, DropSink
from sidecar.wire.repair import Repair, repair_frame
from sidecar.wire.salvage import EDGE_BYTES, DroppedFrame, salvage

__all__ = ["MODERN_VERSION", "ModernEnvelope", "Outgoing", "Replies", "read_capped"]

ENVELOPE_PREFIX = "io.modelcontextprotocol/"
CAPABILITIES_KEY = ENVELOPE_PREFIX + "clientCapabilities"
UPSTREAM_UNAVAILABLE = UpstreamUnavailable.code
_NAME_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_HEADER_SAFE = re.compile(r"^[\x20-\x7e]*$")


class _Peek(msgspec.Struct):
    id: int | str | None = None
    method: str | None = None
    params: msgspec.Raw = msgspec.Raw()
    result: msgspec.Raw = msgspec.Raw()
    error: msgspec.Raw = msgspec.Raw()


log = logging.getLogger(__name__)
_peek = msgspec.json.Decoder(_Peek)
_messages = msgspec.json.Decoder(list[msgspec.Raw])


def _params(raw: msgspec.Raw) -> dict[str, Any]:
    try:
        value = msgspec.json.decode(raw) if raw else {}
    except msgspec.DecodeError:
        return {}
    return value if isinstance(value, dict) else {}


class Outgoing:
    """One frame on its way to the server, with what the channel must know of it."""

    __slots__ = ("frame", "id", "method", "params")

    def __init__(self, frame: bytes, ident: int | str | None, method: str | None, params: msgspec.Raw) -> None:
        self.frame, self.id, self.method, self.params = frame, ident, method, params

    @classmethod
    def peek(cls, frame: bytes) -> Outgoing:
        try:
            head = _peek.decode(frame)
        except msgspec.DecodeError:
            return cls(frame, None, None, msgspec.Raw())
        return cls(frame, head.id, head.method, head.params)

    @property
    def is_request(self) -> bool:
        return self.id is not None and self.method is not None

    @property
    def is_barrier(self) -> bool:
        """Nothing after it goes before its answer's headers are in (the session id, mostly)."""
        return self.id is None or self.method in ("initialize", "server/discover")

    @property
    def answer_cap(self) -> int:
        return MAX_LIST_BYTES if (self.method or "").endswith("/list") else DEFAULT_LINE_CAP

    @property
    def cancelled_id(self) -> int | str | None:
        ident = _params(self.params).get("requestId")
        return ident if type(ident) in (int, str) else None

    def named(self) -> str | None:
        key = _NAME_PARAM.get(self.method or "")
        value = _params(self.params).get(key) if key else None
        return value if isinstance(value, str) else None


def header_value(value: str) -> str:
    """A value as a 2026-07-28 header carries it: plain when safe, else base64 in a sentinel."""
    if _HEADER_SAFE.match(value) and value == value.strip() and not value.startswith("=?base64?"):
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode()}?="


class ModernEnvelope:
    """The per-request envelope of a 2026-07-28 server, adopted once discover says so."""

    def __init__(self, meta: dict[str, Any]) -> None:
        self.meta = meta
        self.adopted = False

    @classmethod
    def offered(cls, probe: Outgoing) -> ModernEnvelope:
        meta = _params(probe.params).get("_meta")
        keys = meta if isinstance(meta, dict) else {}
        return cls({k: v for k, v in keys.items() if k.startswith(ENVELOPE_PREFIX)})

    def judge(self, answer: bytes) -> None:
        if too_deep(answer):
            return
        try:
            head = _peek.decode(answer)
        except msgspec.DecodeError:
            return
        result = _params(head.result) if head.result else {}
        supported = result.get("supportedVersions")
        self.adopted = isinstance(supported, list) and MODERN_VERSION in supported

    def wrap(self, out: Outgoing) -> bytes:
        if not out.is_request or out.method == "server/discover":
            return out.frame
        params = _params(out.params)
        meta = params.get("_meta")
        own = meta if isinstance(meta, dict) else {}
        params["_meta"] = {**own, **self.meta}
        if CAPABILITIES_KEY in own:  # a relayed call says what its own engine can be asked
            params["_meta"][CAPABILITIES_KEY] = own[CAPABILITIES_KEY]
        return msgspec.json.encode({"jsonrpc": "2.0", "id": out.id, "method": out.method, "params": params})

    @staticmethod
    def headers(out: Outgoing) -> dict[str, str]:
        headers = {"MCP-Protocol-Version": MODERN_VERSION, "Mcp-Method": out.method or ""}
        name = out.named()
        if name is not None:
            headers["Mcp-Name"] = header_value(name)
        return headers


class Replies:
    """Server messages to the connection, and error answers in the server's place."""

    def __init__(self, on_line: LineSink, scrub: Callable[[str], str],
                 scrub_result: Callable[[str], str] | None = None) -> None:
        self._on_line = on_line
        self._scrub = scrub
        self._scrub_result = scrub_result
        self._initialize_id: int | str | None = None
        self.on_initialized: Callable[[str], None] | None = None
        self.on_initialize_refused: Callable[[], None] | None = None
        self.on_dropped: DropSink | None = None  # the connection's, for messages of no known request
        self.repaired_values = 0
        self._repair_logged = False

    def watch_initialize(self, ident: int | str | None) -> None:
        self._initialize_id = ident

    def fail(self, out: Outgoing, words: str) -> None:
        """The answer the server could not give: soon, never inside the caller's write."""
        if out.is_request:
            assert out.id is not None
            frame = encode_error(out.id, UPSTREAM_UNAVAILABLE, words).rstrip(b"\n")
            asyncio.get_running_loop().call_soon(self._deliver_one, frame)

    def refused(self, notice: DroppedFrame, out: Outgoing | None = None) -> int | str | None:
        """A message refused unread. When it is (or may be) the answer to `out`, `out` fails
        naming the limit, and its id is returned; else the connection is told."""
        found = salvage(notice.head, notice.tail)
        if out is not None and out.is_request and (found.id == out.id or (found.id is None and found.method is None)):
            self.fail(out, f"the server's answer was refused unread ({notice.size} bytes, {notice.why})")
            return out.id
        if self.on_dropped is not None:
            self.on_dropped(notice)
        return None

    def stream_refused(self, notice: DroppedFrame) -> None:
        """A message refused unread on the server's own stream: the connection decides."""
        self.refused(notice)

    def deliver_body(self, body: bytes, out: Outgoing | None = None) -> set[int | str]:
        """Deliver a JSON body (one message or an array) that came for `out` (None: from the
        server's own stream); returns the ids answered."""
        if too_deep(body):
            ident = self.refused(DroppedFrame(len(body), TOO_DEEP, body[:EDGE_BYTES], body[-EDGE_BYTES:]), out)
            return set() if ident is None else {ident}
        stripped = body.lstrip()
        if stripped[:1] == b"[":
            try:
                messages = [bytes(m) for m in _messages.decode(stripped)]
            except msgspec.DecodeError:
                return set()
        else:
            messages = [stripped]
        answered: set[int | str] = set()
        for message in messages:
            ident = self._deliver_one(message)
            if ident is not None:
                answered.add(ident)
        return answered

    def _deliver_one(self, message: bytes) -> int | str | None:
        try:
            head = _peek.decode(message)
        except msgspec.DecodeError:
            repair = repair_frame(message)
            if repair is None:
                self._on_line(message)  # the connection counts what it cannot read
                return None
            try:
                head = _peek.decode(repair.frame)
            except msgspec.DecodeError:
                self._on_line(message)
                return None
            self._note_repair(repair)
            message = repair.frame  # and on, scrubbed like any other
        if head.error:
            message = self._scrub(message.decode("utf-8", "replace")).encode()
        elif self._scrub_result is not None:
            message = self._scrub_result(message.decode("utf-8", "replace")).encode()
        if head.method is None and head.id is not None and head.id == self._initialize_id:
            if head.result:
                self._learn_version(head.result)
            elif self.on_initialize_refused is not None:
                self.on_initialize_refused()
        self._on_line(message)
        return head.id if head.method is None else None

    def _note_repair(self, repair: Repair) -> None:
        self.repaired_values += repair.values
        if not self._repair_logged:
            self._repair_logged = True
            log.warning("a URL upstream sent text that is not valid (%s); replaced, the rest kept "
                        "(logged once per connection)", ", ".join(repair.reasons))

    def _learn_version(self, result: msgspec.Raw) -> None:
        version = _params(result).get("protocolVersion")
        if isinstance(version, str) and self.on_initialized is not None:
            self.on_initialized(version)

    def deliver_error_for(self, out: Outgoing, body: bytes) -> bool:
        """An HTTP error whose body is the JSON-RPC error for this request: pass it on."""
        if too_deep(body):
            return False
        try:
            head = _peek.decode(body)
        except msgspec.DecodeError:
            return False
        if out.id is None or head.id != out.id or not head.error:
            return False
        self._deliver_one(body)
        return True


async def read_capped(response: aiohttp.ClientResponse, cap: int) -> bytes:
    """The whole body, refused before buffering past `cap` bytes."""
    if response.content_length is not None and response.content_length > cap:
        raise UpstreamUnavailable(f"answered more than {cap} bytes (the cap): {response.content_length} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_any():
        size += len(chunk)
        if size > cap:
            raise UpstreamUnavailable(f"answered more than {cap} bytes (the cap)")
        chunks.append(chunk)
    return b"".join(chunks)


class QueuedChannel:
    """What the URL channels share of the Channel seam: frames are peeked and queued for a
    sending task; once the channel has ended, each request is answered with the reason."""

    _gone: asyncio.Future[None]
    _queue: asyncio.Queue[Outgoing]
    _replies: Replies
    _end: str
    _tasks: set[asyncio.Task[None]]

    async def _cancel_tasks(self) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)

    @property
    def gone(self) -> asyncio.Future[None]:
        return self._gone

    def write(self, data: bytes) -> None:
        for line in data.split(b"\n"):
            if line.strip():
                out = Outgoing.peek(line)
                if self._end:
                    self._replies.fail(out, f"the server {self._end}")
                else:
                    self._queue.put_nowait(out)

    def describe_end(self) -> str:
        return self._end or "stopped"
