"""The 2026-07-28 (stateless) revision on the HTTP front, in one place.

Owns, as pure decisions: recognising a request that carries the per-request envelope in its body, the
checks that come before it is served (the envelope's shape, the `MCP-Protocol-Version`,
`Mcp-Method` and `Mcp-Name` headers against the body, the version), the methods this
revision no longer has, the `server/discover` answer, and the fields every result of
this revision carries. Decides on the body: a header is only ever compared with it.

Owns `subscriptions/listen` too: how a stateless engine hears that the face's tools,
prompts or resources changed, on one long-lived answer stream. The listener is an engine
session registered with the face that keeps only the kinds the engine asked for, tags each
with the subscription id, and opens the stream with
`notifications/subscriptions/acknowledged` naming what is honoured. Per-resource updates
(`resourceSubscriptions`) are honoured for the URIs the sidecar could subscribe to upstream
(`sidecar.front.eras.listen_resources`, before the stream opens); the others are left out
of the acknowledgement, as the revision asks of what a server cannot honour.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import msgspec

from sidecar import __version__
from sidecar.errors import INVALID_PARAMS, METHOD_NOT_FOUND
from sidecar.front.eras.listen_resources import ResourceSubscriptions, asked_uris
from sidecar.front.http.caching import acceptable, hinted, rehinted_bytes
from sidecar.gate.budget.held import CallerScope
from sidecar.hub.face import Face
from sidecar.hub.session import EngineSession
from sidecar.wire import Answer, Event, Notice, Request, RequestId, encode_notification, encode_result
from sidecar.wire.outbox import FrameQueue, Shedding
from sidecar.wire.task_shapes import LEGACY_TASK_STATUS, TASK_STATUS, as_modern
from sidecar.wire.versions import CAPABILITIES_KEY, MODERN_VERSION

if TYPE_CHECKING:
    from multidict import CIMultiDictProxy

__all__ = [
    "HEADER_MISMATCH",
    "Listen",
    "SUBSCRIPTION_KEY",
    "Refusal",
    "UNSUPPORTED_VERSION",
    "discover_result",
    "envelope_of",
    "http_status",
    "judge",
    "stamp_answer",
    "stamp_for",
]

HEADER_MISMATCH = -32020
UNSUPPORTED_VERSION = -32022
SUPPORTED = (MODERN_VERSION,)
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"

SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
NAME_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
# Gone at this revision: the handshake, ping, the log level, subscriptions by resource.
REMOVED = frozenset({"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"})
CACHEABLE = frozenset({"server/discover", "tools/list", "prompts/list", "resources/list",
                       "resources/templates/list", "resources/read"})
_STATUS = {-32700: 400, -32600: 400, INVALID_PARAMS: 400, HEADER_MISMATCH: 400, -32021: 400,
           UNSUPPORTED_VERSION: 400, METHOD_NOT_FOUND: 404}


@dataclass(frozen=True)
class Refusal:
    code: int
    message: str
    data: Any = None


def http_status(code: int) -> int:
    return _STATUS.get(code, 200)


def envelope_of(req: Request) -> dict[str, Any] | None:
    """The request's envelope when its body says it is a 2026-07-28 request."""
    meta = req.params.get("_meta")
    if isinstance(meta, dict) and VERSION_KEY in meta:
        return meta
    return None


def _decoded(value: str | None) -> str | None:
    """A header value, with the `=?base64?...?=` form undone (None when malformed)."""
    if value is None or not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    try:
        return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def judge(req: Request, envelope: dict[str, Any], headers: CIMultiDictProxy[str]) -> Refusal | None:
    """The checks before serving, first failure wins; None to serve. `headers` are the
    request's own (case-blind, every value of a repeated header kept).

    Each header is read as its one value, or None when it came twice (as bad as never). A
    request as clients send it (each header once, equal to the body, the name not in the
    base64 form) passes each check on its first comparison; any other is judged in full."""
    if not isinstance(envelope.get(CAPABILITIES_KEY), dict):
        return Refusal(INVALID_PARAMS, f"params._meta must carry {VERSION_KEY!r} and {CAPABILITIES_KEY!r}")
    version = envelope.get(VERSION_KEY)
    got = headers.getall("mcp-protocol-version", ())
    if got != [version] and (got[0] if len(got) == 1 else None) != version:
        return Refusal(HEADER_MISMATCH, "the MCP-Protocol-Version header does not match params._meta")
    method = req.method
    got = headers.getall("mcp-method", ())
    if got != [method] and (got[0] if len(got) == 1 else None) != method:
        return Refusal(HEADER_MISMATCH, "the Mcp-Method header does not match the body's method")
    key = NAME_PARAM.get(method)
    if key is not None:
        params = req.params
        if key in params:
            wanted = params[key]
            got = headers.getall("mcp-name", ())
            if got != [wanted] or wanted.startswith("=?base64?"):  # equal to a header: a string
                name = got[0] if len(got) == 1 else None
                if name is not None and name.startswith("=?base64?"):
                    name = _decoded(name)
                if name != wanted:
                    return Refusal(HEADER_MISMATCH, f"the Mcp-Name header does not match params.{key}")
    if version != MODERN_VERSION:  # SUPPORTED holds only this revision
        if not isinstance(version, str):
            return Refusal(INVALID_PARAMS, "the protocol version in params._meta must be a string")
        if version not in SUPPORTED:
            return Refusal(UNSUPPORTED_VERSION, "unsupported protocol version",
                           {"supported": list(SUPPORTED), "requested": version})
    if method in REMOVED:
        return Refusal(METHOD_NOT_FOUND, f"method not found at {MODERN_VERSION}: {method}")
    return None


def discover_result(capabilities: dict[str, Any]) -> dict[str, Any]:
    info = {"name": "omb-sidecar", "version": __version__}
    capabilities = {k: v for k, v in capabilities.items() if k != "tasks"}  # 2026-07-28: the tasks extension's
    return {
        "supportedVersions": list(SUPPORTED),
        "capabilities": capabilities,
        "_meta": {SERVER_INFO_KEY: info},
        "resultType": "complete",
        "ttlMs": 0,
        "cacheScope": "private",
    }


# The fields every result of this revision carries, and those of cacheable ones.
_STAMP: dict[str, Any] = {"resultType": "complete"}
_CACHE_STAMP: dict[str, Any] = {**_STAMP, "ttlMs": 0, "cacheScope": "private"}
_BLANK = b" \t\r\n"
_OPEN_BRACE, _CLOSE_BRACE = ord("{"), ord("}")
_RESULT_TYPE = msgspec.json.encode(_STAMP)[1:-1]  # `"resultType":"complete"`, spliced as it is
_COMMA_RESULT_TYPE = b"," + _RESULT_TYPE
_BLANK_OR_OPEN = _BLANK + b"{"


class _StampKeys(msgspec.Struct):
    """What a result already says of the stamped fields (every other member skipped)."""

    resultType: Any = msgspec.UNSET  # noqa: N815 - the wire's names
    ttlMs: Any = msgspec.UNSET  # noqa: N815
    cacheScope: Any = msgspec.UNSET  # noqa: N815


_stamp_keys = msgspec.json.Decoder(_StampKeys)


def stamp_for(method: str) -> Callable[[Answer], bytes]:
    """`stamp_answer` for `method`'s answers: one made once for every method not cacheable
    (their stamp is the same), a new one for a cacheable method (its hints follow the method)."""
    return partial(stamp_answer, method) if method in CACHEABLE else _PLAIN_STAMP


def stamp_answer(method: str, answer: Answer) -> bytes:
    """The answer's frame with `resultType` (and caching hints where cacheable) in its
    result. `resultType` is kept when the result has one; caching hints are made safe
    (`sidecar.front.http.caching`: always `private`, a bounded ttl). A result the sidecar
    built is a dict; one an upstream sent stays bytes: its top-level keys are read (every
    value skipped, nothing built) and the missing fields spliced in before its last
    brace, or, when it carries hints of its own the sidecar must narrow, rebuilt."""
    result = answer.result
    cacheable = method in CACHEABLE
    if isinstance(result, dict):
        if cacheable:
            return encode_result(answer.id, hinted(method, result))
        return encode_result(answer.id, {**result, **{k: v for k, v in _STAMP.items() if k not in result}})
    if cacheable:
        return _spliced(answer.id, result, _CACHE_STAMP, method)
    raw = memoryview(result)  # most answers: a call's result, where only `resultType` may be missing
    present = _present(raw)
    if present is None or present.resultType is not msgspec.UNSET:
        return encode_result(answer.id, result)
    return _splice(answer.id, raw, _RESULT_TYPE)


def _stamp_plain(answer: Answer) -> bytes:
    """`stamp_answer` of a method that is not cacheable (a call's answer, most of them)."""
    result = answer.result
    if isinstance(result, dict):
        return stamp_answer("tools/call", answer)
    raw = memoryview(result)
    present = _present(raw)
    if present is None or present.resultType is not msgspec.UNSET:
        return encode_result(answer.id, result)
    end = len(raw) - 1
    if raw[end] == _CLOSE_BRACE and raw[end - 1] not in _BLANK_OR_OPEN:  # compact, not empty: most results
        return b"".join((b'{"jsonrpc":"2.0","id":', msgspec.json.encode(answer.id), b',"result":',
                         raw[:end], _COMMA_RESULT_TYPE, b"}}\n"))
    return _splice(answer.id, raw, _RESULT_TYPE)


_PLAIN_STAMP: Callable[[Answer], bytes] = _stamp_plain


def _spliced(ident: RequestId, result: bytes | msgspec.Raw, stamps: dict[str, Any], cached: str) -> bytes:
    raw = memoryview(result)
    present = _present(raw)
    if present is None:  # not an object: passed as it came
        return encode_result(ident, result)
    if not _safe_hints(cached, present):
        rebuilt = rehinted_bytes(cached, raw)
        return encode_result(ident, msgspec.Raw(rebuilt) if rebuilt is not None else result)
    missing = {key: value for key, value in stamps.items() if getattr(present, key) is msgspec.UNSET}
    if not missing:  # stamped already
        return encode_result(ident, result)
    return _splice(ident, raw, msgspec.json.encode(missing)[1:-1])


def _splice(ident: RequestId, raw: memoryview, members: bytes) -> bytes:
    """The answer frame of a result object (raw JSON) with `members` added before its last brace."""
    end = len(raw)
    if raw[end - 1] != _CLOSE_BRACE:  # blanks after it (seldom: a result is most often compact)
        while raw[end - 1] in _BLANK:
            end -= 1
    inner = end - 1  # the last brace; what comes before it tells an empty object
    while raw[inner - 1] in _BLANK:
        inner -= 1
    comma = b"" if raw[inner - 1] == _OPEN_BRACE else b","
    return b"".join((b'{"jsonrpc":"2.0","id":', msgspec.json.encode(ident), b',"result":',
                     raw[:end - 1], comma, members, b"}}\n"))


def _present(raw: memoryview) -> _StampKeys | None:
    """What the result says of the stamped fields at its top level; None when it is not an object."""
    try:
        return _stamp_keys.decode(raw)
    except msgspec.DecodeError:  # ValidationError too: not an object
        return None


def _safe_hints(method: str, present: _StampKeys) -> bool:
    """No hints at all (the stamp adds safe ones), or hints already as the sidecar sets them."""
    if present.ttlMs is msgspec.UNSET and present.cacheScope is msgspec.UNSET:
        return True
    return acceptable(method, present.ttlMs, present.cacheScope)


def answer_status(error_code: int | None) -> int:
    """The HTTP status of a JSON answer: 200 for a result, by its code for an error."""
    return 200 if error_code is None else http_status(error_code)


# -- subscriptions/listen ---------------------------------------------------------------

SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"
# filter key -> the notification it lets through
KINDS = {
    "toolsListChanged": "notifications/tools/list_changed",
    "promptsListChanged": "notifications/prompts/list_changed",
    "resourcesListChanged": "notifications/resources/list_changed",
}
UPDATED = "notifications/resources/updated"


def own_task_ids(face: Face, owner: object, wanted: object) -> frozenset[str]:
    """The task ids asked for that are this caller's own tasks (any other is not honoured)."""
    ids = [i for i in wanted if isinstance(i, str)] if isinstance(wanted, list) else []
    return frozenset(i for i in ids if any(r.exposed_id == i for r in face.tasks.of(owner)))


class Listen:
    """One open `subscriptions/listen` stream: frames to write, in order; None ends it."""

    def __init__(self, face: Face, ident: RequestId, wanted: object, caller: str = "") -> None:
        self.face = face
        self.ident = ident
        asked = self.asked = wanted if isinstance(wanted, dict) else {}
        self.honoured: dict[str, Any] = {key: True for key in KINDS if asked.get(key) is True}
        self.allowed = frozenset(KINDS[key] for key in self.honoured)
        self.frames = FrameQueue(Shedding("a subscriptions/listen stream"))
        self.session = EngineSession(emit=self._take)
        self.session.announced = True
        self.session.held_scope = CallerScope(caller)  # the caller's own tasks' statuses reach this stream
        self.task_ids = own_task_ids(face, self.session.held_scope, asked.get("taskIds"))
        if self.task_ids:
            self.honoured["taskIds"] = sorted(self.task_ids)
        self.uris: frozenset[str] = frozenset()  # the resources whose updates were honoured
        self._resources: ResourceSubscriptions | None = None
        self._taken: list[str] = []  # the URIs held upstream for this stream
        self._pending: dict[str, bytes] = {}  # kind (or updated URI) -> its frame in `frames`, not yet written

    async def start(self, resources: ResourceSubscriptions) -> None:
        """Subscribe upstream to the resources asked for, then `open` acknowledging those honoured."""
        self._resources, self._taken = resources, []
        await resources.take(asked_uris(self.asked), self._taken)  # filled as it goes: a hang-up releases what it held
        self.uris = frozenset(self._taken)
        self.session.resource_uris = set(self._taken)  # the face tells this stream of these URIs' updates
        if self._taken:
            self.honoured["resourceSubscriptions"] = list(self._taken)
        self.open()

    def open(self) -> None:
        self.frames.put(encode_notification("notifications/subscriptions/acknowledged", {
            "notifications": self.honoured, "_meta": self._meta()}))
        self.face.sessions.append(self.session)

    def close(self) -> None:
        """Leave the face, and the upstream subscriptions held for it; a graceful end gets the closing result."""
        self.session.resource_uris = set()  # no longer asking: an engine's own subscription is not held up by it
        if self._resources is not None:
            self._resources.release(self._taken)
            self._resources = None
        if self.session in self.face.sessions:
            self.face.sessions.remove(self.session)
            self.frames.put(encode_result(self.ident, {"_meta": self._meta(), "resultType": "complete"}))
            self.frames.put(None)

    def written(self, frame: bytes) -> None:
        """`frame` left for the engine: a later change of its kind is news again."""
        for method, waiting in list(self._pending.items()):
            if waiting == frame:
                del self._pending[method]

    def _meta(self) -> dict[str, Any]:
        return {SUBSCRIPTION_KEY: self.ident}

    def _take(self, event: Event) -> None:
        if type(event) is not Notice:
            return
        method = event.method
        if method == UPDATED:
            self._updated(event.params)
        elif method == LEGACY_TASK_STATUS:
            self._task_status(event.params)
        elif method in self.allowed and method not in self._pending:
            # A change not yet written says all another would: one of each kind waits.
            frame = encode_notification(method, {"_meta": self._meta()})
            self._pending[method] = frame
            self.frames.offer(frame, method)

    def _task_status(self, params: Any) -> None:
        """A task's status, as the tasks extension says it, for a task this stream was honoured."""
        task_id = params.get("taskId") if isinstance(params, dict) else None
        if task_id in self.task_ids:
            status = {**as_modern(params), "_meta": self._meta()}
            self.frames.offer(encode_notification(TASK_STATUS, status), TASK_STATUS)

    def _updated(self, params: Any) -> None:
        """A resource changed: news for this stream only when it was honoured that URI."""
        uri = params.get("uri") if isinstance(params, dict) else None
        if not isinstance(uri, str) or uri not in self.uris or uri in self._pending:
            return
        frame = encode_notification(UPDATED, {"uri": uri, "_meta": self._meta()})
        self._pending[uri] = frame
        if not self.frames.offer(frame, UPDATED):
            del self._pending[uri]  # shed: a later update is news again
