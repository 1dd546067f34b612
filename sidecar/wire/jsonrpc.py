"""JSON-RPC 2.0 envelopes: strict decoding of what the engine sends, lean decoding of
what upstreams send, and byte-level encoders.

Engine frames are judged by the gate, so they are decoded strictly (RELIABILITY rule 2),
once, by one msgspec decoder built at import: duplicate keys, NaN/Infinity, out-of-range
numbers, lone surrogates, boolean or fractional ids and non-object params are refused with
the JSON-RPC code that fits. A refused request still gets its own id back whenever the
frame can be read as far as its envelope (`salvage_request_id`), so the engine's request
ends: exactly one answer for every request that carries a readable id (rule 4).
Upstream frames are decoded lazily: `params`, `result` and `error` stay `msgspec.Raw`, so
passing a result through is a copy, not a parse. Both are measured for nesting depth
before any decoder sees them (`sidecar.wire.depth`): decoders recurse.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import msgspec

from sidecar.errors import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR
from sidecar.wire.depth import MAX_DEPTH, too_deep
from sidecar.wire.duplicates import has_duplicate_key
from sidecar.wire.salvage import EDGE_BYTES, DroppedFrame, salvage

__all__ = [
    "EngineMessage",
    "FrameRejected",
    "Notification",
    "Request",
    "Response",
    "UpstreamFrame",
    "decode_engine_frame",
    "decode_upstream_frame",
    "encode_error",
    "encode_error_raw",
    "encode_notification",
    "encode_request",
    "encode_result",
    "refuse_dropped",
    "salvage_request_id",
    "RequestId",
    "TOO_DEEP",
]

# The refusal of a frame nested past the limit (the same words for engine and upstream).
TOO_DEEP = f"nested deeper than {MAX_DEPTH} levels (the sidecar's limit)"

RequestId = int | str


class Request(msgspec.Struct, frozen=True):
    id: RequestId
    method: str
    params: dict[str, Any]


class Notification(msgspec.Struct, frozen=True):
    method: str
    params: dict[str, Any]


class Response(msgspec.Struct, frozen=True):
    """The engine's answer to a request the sidecar relayed to it."""

    id: RequestId
    result: Any = None
    error: dict[str, Any] | None = None


class FrameRejected(msgspec.Struct, frozen=True):
    """A frame refused before dispatch; `id` is echoed when it could be read."""

    code: int
    message: str
    id: RequestId | None = None


EngineMessage = Request | Notification | Response


class UpstreamFrame(msgspec.Struct):
    jsonrpc: str = ""
    id: int | str | None = None
    method: str | None = None
    params: msgspec.Raw = msgspec.Raw()
    result: msgspec.Raw = msgspec.Raw()
    error: msgspec.Raw = msgspec.Raw()


class _Shell(msgspec.Struct):
    """The envelope of a frame, its members unread: msgspec skips whatever else the frame
    holds without judging its numbers, so a `1e400` deep in `params` still lets the id be read."""

    id: msgspec.Raw = msgspec.Raw()
    method: msgspec.Raw = msgspec.Raw()


_upstream_decoder = msgspec.json.Decoder(UpstreamFrame)
_shell_decoder = msgspec.json.Decoder(_Shell)
_engine_decoder = msgspec.json.Decoder()
_encode = msgspec.json.encode


class _DuplicateKey(ValueError):
    pass


def _decode_strict(line: bytes) -> Any:
    """Decode a frame once, refusing what JSON or the gate cannot judge unambiguously.

    msgspec refuses NaN/Infinity, numbers out of range and lone surrogates itself;
    invalid UTF-8 is replaced and the frame decoded again (it was refused whole, so
    nothing was decoded twice); a repeated key is found by `has_duplicate_key`."""
    try:
        obj = _engine_decoder.decode(line)
    except msgspec.DecodeError:
        line = line.decode("utf-8", "replace").encode()
        obj = _engine_decoder.decode(line)  # still bad once UTF-8 is repaired: refuse
    if has_duplicate_key(line, obj):
        raise _DuplicateKey("duplicate key in object")
    return obj


def _valid_id(value: object) -> bool:
    return type(value) is int or type(value) is str


class _PlainRequest(msgspec.Struct, forbid_unknown_fields=True):
    """A request as most engine frames are, and nothing else: `jsonrpc` 2.0, an integer or
    string id, a string method, object params or none, no other member. msgspec judges it
    in C as it decodes (a boolean or fractional id, a null or list `params`, an unknown
    member: each does not fit), with the generic decoder's own rules for what `params`
    holds, so a frame that fits is exactly a frame `_envelope` would take as a Request."""

    jsonrpc: Literal["2.0"]
    id: int | str
    method: str
    params: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET


_plain_decoder = msgspec.json.Decoder(_PlainRequest)
_UNSET = msgspec.UNSET


def decode_engine_frame(line: bytes) -> EngineMessage | FrameRejected:
    """Decode one line from the engine into a message or a rejection with its code.

    A plain request is decoded once, straight into its shape; any other frame (a
    notification, an answer, anything malformed) does not fit it and is decoded again,
    generically, and judged member by member with the refusal that fits."""
    if len(line) > MAX_DEPTH and too_deep(line, MAX_DEPTH):  # a shorter text cannot nest deeper
        return _too_deep(line)
    try:
        plain = _plain_decoder.decode(line)
    except msgspec.DecodeError:  # its ValidationError too: not a plain request
        return _decode_generic(line)
    # the re-encoding omits only an absent `params`, as the text did; a text equal to it
    # (every compact sender's) is settled here, `has_duplicate_key`'s own first test
    again = _encode(plain)
    if again != line and has_duplicate_key(line, plain, again):
        return FrameRejected(PARSE_ERROR, "parse error: duplicate key in object", salvage_request_id(line))
    params = plain.params
    return Request(plain.id, plain.method, {} if params is _UNSET else params)


def _decode_generic(line: bytes) -> EngineMessage | FrameRejected:
    try:
        obj = _decode_strict(line)
    except _DuplicateKey:
        return FrameRejected(PARSE_ERROR, "parse error: duplicate key in object", salvage_request_id(line))
    except RecursionError:  # not reached while the limit is below the decoders' own
        return FrameRejected(PARSE_ERROR, f"parse error: {TOO_DEEP}")
    except (msgspec.DecodeError, ValueError) as exc:
        return FrameRejected(PARSE_ERROR, f"parse error: not valid JSON ({exc})", salvage_request_id(line))
    if isinstance(obj, list):
        return FrameRejected(INVALID_REQUEST, "batch requests are not supported")
    if not isinstance(obj, dict):
        return FrameRejected(INVALID_REQUEST, "a message must be a JSON object")
    return _envelope(obj)


def salvage_request_id(line: bytes) -> RequestId | None:
    """The id of a refused frame that is a request (it names a method), when it can be read
    for certain: from its outermost object when the frame parses that far (an id given
    twice there is no id), else from its first and last bytes (`salvage`)."""
    outer = _outer_members(line)
    if outer is None:  # not JSON even to a lenient reader: only its edges can tell
        found = salvage(line[:EDGE_BYTES], line[-EDGE_BYTES:])
        return found.id if found.method else None
    ident, method = outer
    if isinstance(method, str) and isinstance(ident, (int, str)) and not isinstance(ident, bool):
        return ident
    return None


def _outer_members(line: bytes) -> tuple[object, object] | None:
    """(id, method) of the outermost object; None when the text is no JSON object."""
    try:
        shell = _shell_decoder.decode(line)  # skips the rest unjudged: quick on a big frame
    except msgspec.DecodeError:
        return _leniently(line)  # NaN, Infinity, bad escapes: the standard library reads them
    if line.count(b'"id"') != 1 or b"\\u" in line:  # the id may be given twice (or spelled escaped)
        return _leniently(line)
    return _scalar_of(shell.id), _scalar_of(shell.method)


def _scalar_of(raw: msgspec.Raw) -> object:
    if not raw:
        return None
    try:
        return _engine_decoder.decode(raw)
    except msgspec.DecodeError:
        return None


class _Members(list[tuple[str, Any]]):
    """One object's members as the standard library read them, in order, repeats kept."""


def _short_int(digits: str) -> object:
    return int(digits) if len(digits) <= 20 else None  # no id is longer; never a 5,000-digit parse


def _leniently(line: bytes) -> tuple[object, object] | None:
    try:
        outer = json.loads(line.decode("utf-8", "replace"), object_pairs_hook=_Members, parse_int=_short_int)
    except (ValueError, RecursionError):
        return None
    if not isinstance(outer, _Members):
        return None
    keys = [key for key, _ in outer]
    if keys.count("id") > 1:
        return (None, None)
    members = dict(outer)
    return members.get("id"), members.get("method")


def refuse_dropped(dropped: DroppedFrame) -> FrameRejected | None:
    """The answer owed to an engine frame dropped unread (over a size cap): an error under
    its id when its first or last bytes show a request; None when no request can be named."""
    found = salvage(dropped.head, dropped.tail)
    if found.id is None or found.method is None:
        return None
    return FrameRejected(INVALID_REQUEST, f"request too large: {dropped.size:,} bytes, {dropped.why}; "
                                          "it was not read", found.id)


def _too_deep(line: bytes) -> FrameRejected:
    """Refused unread; a request's id is echoed when the frame's edges show it, so the
    engine's request still ends."""
    found = salvage(line[:EDGE_BYTES], line[-EDGE_BYTES:])
    return FrameRejected(PARSE_ERROR, f"parse error: {TOO_DEEP}", found.id if found.method else None)


def _envelope(obj: dict[str, Any]) -> EngineMessage | FrameRejected:
    ident = obj.get("id")
    method = obj.get("method")
    if type(method) is str and (type(ident) is int or type(ident) is str) and obj.get("jsonrpc") == "2.0":
        params = obj.get("params", _NO_PARAMS)  # a request, as most frames are: judged in one test
        if params is _NO_PARAMS:
            return Request(ident, method, {})
        if type(params) is dict:
            return Request(ident, method, params)
    return _judged(obj)


_NO_PARAMS: Any = object()


def _judged(obj: dict[str, Any]) -> EngineMessage | FrameRejected:
    """Every frame that is not a plain request, member by member, with the refusal that fits."""
    ident = obj.get("id")
    has_id = "id" in obj
    if has_id and not _valid_id(ident):
        return FrameRejected(INVALID_REQUEST, "id must be a string or an integer")
    echo = ident if has_id else None
    if obj.get("jsonrpc") != "2.0":
        return FrameRejected(INVALID_REQUEST, 'jsonrpc must be "2.0"', echo)
    method = obj.get("method")
    if method is None and has_id and ("result" in obj or "error" in obj):
        return _response(obj)
    if not isinstance(method, str):
        return FrameRejected(INVALID_REQUEST, "method must be a string", echo)
    params = obj.get("params", {})
    if not isinstance(params, dict):
        return FrameRejected(INVALID_PARAMS, "params must be an object", echo)
    if has_id:
        assert ident is not None
        return Request(ident, method, params)
    return Notification(method, params)


def _response(obj: dict[str, Any]) -> Response | FrameRejected:
    error = obj.get("error")
    if "result" in obj and error is not None:
        return FrameRejected(INVALID_REQUEST, "a response has result or error, not both")
    if error is not None and not isinstance(error, dict):
        return FrameRejected(INVALID_REQUEST, "error must be an object")
    return Response(obj["id"], obj.get("result"), error)


def decode_upstream_frame(line: bytes) -> UpstreamFrame | None:
    """Decode one line from an upstream; None for a line that is not a JSON-RPC object.

    The caller measures the depth first (`too_deep`) when it wants to tell a too-deep
    frame from garbage; one that slips through is refused here all the same."""
    try:
        return _upstream_decoder.decode(line)
    except msgspec.DecodeError:
        pass
    except RecursionError:
        return None
    try:
        return _upstream_decoder.decode(line.decode("utf-8", "replace").encode())
    except (msgspec.DecodeError, RecursionError):
        return None


def _id_bytes(ident: RequestId | None) -> bytes:
    return b"null" if ident is None else _encode(ident)


def encode_result(ident: RequestId, result: bytes | msgspec.Raw | Any) -> bytes:
    """A success response; `result` given as bytes/Raw is spliced in without parsing
    (joined, one copy: `%` formatting of a large body costs many times more)."""
    body = result if isinstance(result, (bytes, msgspec.Raw)) else _encode(result)
    return b"".join((b'{"jsonrpc":"2.0","id":', _encode(ident), b',"result":', body, b"}\n"))


def encode_error(
    ident: RequestId | None, code: int, message: str, data: Any = None
) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return b'{"jsonrpc":"2.0","id":%b,"error":%b}\n' % (_id_bytes(ident), _encode(error))


def encode_error_raw(ident: RequestId, error: bytes | msgspec.Raw) -> bytes:
    """Pass an upstream's error object through under the engine's id."""
    return b"".join((b'{"jsonrpc":"2.0","id":', _id_bytes(ident), b',"error":', error, b"}\n"))


def encode_request(ident: RequestId, method: str, params: Any = None) -> bytes:
    frame: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        frame["params"] = params
    return _encode(frame) + b"\n"


def encode_notification(method: str, params: Any = None) -> bytes:
    frame: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        frame["params"] = params
    return _encode(frame) + b"\n"
