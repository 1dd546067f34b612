"""The `initialize` answer with the standard library alone, for the first milliseconds of a
stdio start, and the capabilities of a face whose upstreams are all on their first start.

Owns two things the early answers share:

- `starting_capabilities`: what a face offers while every upstream is still on its first
  start (the dispatcher's `server_capabilities` says the same then: a test builds a face
  and compares). `sidecar.wire.hello` answers with it once msgspec is loaded; this module
  answers with it before.
- `answer_plainly`: the answer to a whole `initialize` first line, read with `json`'s C
  scanner (`sidecar.plain_json`, `json` itself not loaded), for the
  entry point (`sidecar.entry`) before msgspec, the config and the CLI load. It answers
  only a frame the strict decoder (`sidecar.wire.jsonrpc.decode_engine_frame`) and the
  typed params (`InitializeParams`) would take as they are, and says None for anything it
  is not certain of: a partial line, another method, a duplicate key, NaN, a lone
  surrogate, a number msgspec refuses, params of another shape, a frame nested deeper than
  `PLAIN_DEPTH`. Then the CLI's answer (`sidecar.wire.hello.answer_waiting`) or the
  dispatcher's judges the same bytes, as before. Its bytes are `encode_event(Answer(...))`'s
  (a test holds both to the same bytes over generated frames).

No msgspec, `json` or `typing` here, no I/O.
"""

from __future__ import annotations

from sidecar import __version__
from sidecar.plain_json import json_document, json_text
from sidecar.wire.versions import HANDSHAKE_VERSIONS, UI_EXTENSION

TYPE_CHECKING = False  # `typing` (about 5 ms with what it loads) waits for the runtime
if TYPE_CHECKING:
    from typing import Any

    from sidecar.listing_snapshot import ListingInputs, Page

__all__ = ["PLAIN_DEPTH", "TASKS_WHILE_STARTING", "Ahead", "ListedAhead", "answer_plainly", "initialize_result", "offer",
           "plain_request", "starting_capabilities"]

# What an upstream still on its first start counts as offering of tasks: everything the
# sidecar routes (an engine that then sends a task request gets "unknown task").
TASKS_WHILE_STARTING: dict[str, Any] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
# The nesting an early answer reads, at most (the strict decoder's own limit is far above).
PLAIN_DEPTH = 32
_INT_RANGE = (-(1 << 63), (1 << 64) - 1)  # the integers msgspec decodes (int64 and uint64)
_INFINITY = float("inf")
# sidecar.wire.task_shapes.TASKS_EXTENSION (a test keeps them equal): that module is not loaded
# for one name before the early answer
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
_ENVELOPE = frozenset({"jsonrpc", "id", "method", "params"})
# InitializeParams' fields and the type each must have when present and not null
_PARAM_TYPES: dict[str, type] = {"protocolVersion": str, "capabilities": dict, "clientInfo": dict, "_meta": dict}


class ListedAhead:
    """The listing side of what the entry point did: the inputs of this start's first
    listing (`sidecar.listing_snapshot`, for the runtime to keep its pages under their key)
    and, when it answered the engine's first `tools/list` from the snapshot, the pages kept
    there (None: nothing sent; the runtime answers the engine's first listing itself). A
    plain class: a NamedTuple is built by `typing`."""

    __slots__ = ("inputs", "sent")

    def __init__(self, inputs: ListingInputs, sent: list[Page] | None = None) -> None:
        self.inputs, self.sent = inputs, sent

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ListedAhead) and (self.inputs, self.sent) == (other.inputs, other.sent))

    def __repr__(self) -> str:
        return f"ListedAhead(inputs={self.inputs!r}, sent={self.sent!r})"


class Ahead:
    """What the entry point read of stdin before the CLI loaded, and whether it answered its
    first line (`initialize`): the CLI goes on from there. A `tools/list` the entry point
    answered from the listing snapshot is not in `read` (the runtime never sees it);
    `listed` says what was sent, and what this start's listing depends on."""

    __slots__ = ("answered", "listed", "read")

    def __init__(self, read: bytes, answered: bool, listed: ListedAhead | None = None) -> None:
        self.read, self.answered, self.listed = read, answered, listed

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Ahead)
                and (self.read, self.answered, self.listed) == (other.read, other.answered, other.listed))

    def __repr__(self) -> str:
        return f"Ahead(read={self.read!r}, answered={self.answered!r}, listed={self.listed!r})"


def offer(offered: dict[str, Any], caps: dict[str, Any] | None) -> None:
    """Add one upstream's capabilities to `offered`; `caps` None: an upstream still on its
    first start, which counts as offering everything."""
    if caps is None or "resources" in caps:
        subscribe = caps is None or bool((caps.get("resources") or {}).get("subscribe"))
        current = offered.get("resources", {"listChanged": True, "subscribe": False})
        offered["resources"] = {"listChanged": True, "subscribe": current["subscribe"] or subscribe}
    for kind, value in (("prompts", {"listChanged": True}), ("logging", {}), ("completions", {})):
        if caps is None or kind in caps:
            offered[kind] = value


def starting_capabilities(upstreams: int) -> dict[str, Any]:
    """A face's capabilities while its `upstreams` are all on their first start: what the
    dispatcher's `server_capabilities` says at that moment too (tasks, the Apps and the
    tasks extensions included), so an early answer and the dispatcher's are the same bytes."""
    offered: dict[str, Any] = {"tools": {"listChanged": True}}
    if upstreams:  # a second starting upstream adds nothing to the first
        offer(offered, None)
        offered["tasks"] = TASKS_WHILE_STARTING
        offered["extensions"] = {UI_EXTENSION: {}, TASKS_EXTENSION: {}}
    return offered


class _NotCertain(ValueError):
    """The frame holds something the strict decoder may judge otherwise."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise _NotCertain("duplicate key")
    return found


def _refuse_constant(name: str) -> Any:
    raise _NotCertain(name)


def _plain_value(value: Any, depth: int) -> bool:
    """Whether msgspec decodes `value` to the same thing: finite numbers in its range,
    strings of whole characters, nesting within `PLAIN_DEPTH`."""
    if depth > PLAIN_DEPTH:
        return False
    if isinstance(value, str):
        return _whole(value)
    if isinstance(value, bool) or value is None:
        return True
    if isinstance(value, int):
        return _INT_RANGE[0] <= value <= _INT_RANGE[1]
    if isinstance(value, float):
        return -_INFINITY < value < _INFINITY  # not NaN either
    if isinstance(value, list):
        return all(_plain_value(item, depth + 1) for item in value)
    assert isinstance(value, dict)
    return all(_whole(key) and _plain_value(item, depth + 1) for key, item in value.items())


def _whole(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:  # a lone surrogate, written as an escape
        return False
    return True


def plain_request(line: bytes) -> dict[str, Any] | None:
    """`line` (one frame, no newline) read as a request or notification the strict decoder
    takes as it is: an object of the envelope's keys, "jsonrpc" "2.0", a method, an id (when
    present) an integer or a string, params (when present) an object; None for anything it
    is not certain of (see above)."""
    data = line.rstrip(b"\r")
    # read as `json.loads(data.decode())` reads it: strict UTF-8, and no byte order mark or
    # NUL (`json_document`, like `json.loads` of bytes, would take UTF-16 or -32 then)
    if data.startswith(b"\xef\xbb\xbf") or b"\0" in data:
        return None
    try:
        data.decode()
        frame = json_document(data, object_pairs_hook=_pairs, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):  # _NotCertain, not JSON, not UTF-8
        return None
    if not (isinstance(frame, dict) and set(frame) <= _ENVELOPE and frame.get("jsonrpc") == "2.0"
            and type(frame.get("method")) is str and _plain_value(frame, 0)):
        return None
    if ("id" in frame and type(frame["id"]) not in (int, str)) or type(frame.get("params", {})) is not dict:
        return None
    return frame


def answer_plainly(waiting: bytes, capabilities: dict[str, Any]) -> tuple[bytes, int] | None:
    """The answer to `waiting`'s first line when it is certainly a whole, valid `initialize`
    request, and where the bytes after that line begin; None otherwise (see above)."""
    end = waiting.find(b"\n")
    if end < 0:
        return None
    frame = plain_request(waiting[:end])
    if frame is None or frame["method"] != "initialize" or "id" not in frame:
        return None
    ident, params = frame["id"], frame.get("params", {})
    if any(params.get(name) is not None and type(params[name]) is not kind for name, kind in _PARAM_TYPES.items()):
        return None
    answer = {"jsonrpc": "2.0", "id": ident, "result": initialize_result(params, capabilities)}
    return json_text(answer, ascii=False).encode() + b"\n", end + 1


def initialize_result(params: dict[str, Any], capabilities: dict[str, Any]) -> dict[str, Any]:
    """The result of `initialize` with `params` for a face offering `capabilities`: the
    revision chosen from what the engine offers, the capabilities, the server's name and
    version (the one source for the early answers and the dispatcher's)."""
    offered = params.get("protocolVersion")
    version = offered if offered in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
    return {"protocolVersion": version, "capabilities": capabilities,
            "serverInfo": {"name": "omb-sidecar", "version": __version__}}
