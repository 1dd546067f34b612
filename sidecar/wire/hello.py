"""The `initialize` handshake's answer, and answering it before the runtime has loaded.

Owns what an engine's `initialize` gets (the revision chosen from what it offers, the
capabilities, the server's name and version) and what the session keeps of it (the
`Hello`), for the dispatcher and for the early answer alike, so both say the same bytes.

The early answer (`answer_waiting`): the stdio CLI reads what the engine already wrote
once the config is loaded, before the gate, the fronts and the event loop are imported.
When it begins with a whole `initialize` request, that request is answered there and
then, with the capabilities of upstreams that are all still on their first start
(`sidecar.wire.plain_hello.starting_capabilities`: what the dispatcher would say at that
moment too); the bytes after it go to the stdio front unread. Anything else (a partial
line, another method, a malformed frame, params the dispatcher would refuse) is answered
by the dispatcher as usual, from the same bytes. The entry point may have answered the
same line earlier still, with the standard library (`sidecar.wire.plain_hello`): the CLI
then reads the session's `Hello` here, from the same bytes.
"""

from __future__ import annotations

from typing import Any

import msgspec

from sidecar.wire.events import Answer, encode_event
from sidecar.wire.jsonrpc import Request, decode_engine_frame
from sidecar.wire.plain_hello import TASKS_WHILE_STARTING, initialize_result, offer, starting_capabilities
from sidecar.wire.requests import InitializeParams

__all__ = ["Early", "Hello", "TASKS_WHILE_STARTING", "answer_waiting", "hello_of", "offer", "starting_capabilities"]


class Hello(msgspec.Struct, frozen=True):
    """What a session keeps of the engine's `initialize`, and the result it was given."""

    version: str
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any]
    result: dict[str, Any]


class Early(msgspec.Struct, frozen=True):
    """What the early read found: the `initialize` answered (None: not answered) and the
    bytes the stdio front still has to frame, in order."""

    hello: Hello | None
    rest: bytes


def hello_of(params: dict[str, Any], capabilities: dict[str, Any]) -> Hello:
    """The answer to `initialize` with `params`, for a face offering `capabilities`."""
    result = initialize_result(params, capabilities)
    client_capabilities = params.get("capabilities")
    info = params.get("clientInfo")
    return Hello(result["protocolVersion"], client_capabilities if isinstance(client_capabilities, dict) else {},
                 info if isinstance(info, dict) else {}, result)


def answer_waiting(waiting: bytes, capabilities: dict[str, Any]) -> tuple[Early, bytes]:
    """The early answer to what the engine wrote so far: (what the session keeps and the
    rest, the answer's bytes or b"" when the dispatcher answers everything)."""
    end = waiting.find(b"\n")
    line = waiting[:end].rstrip(b"\r") if end >= 0 else b""
    if not line.strip():
        return Early(None, waiting), b""
    request = decode_engine_frame(line)
    if type(request) is not Request or request.method != "initialize" or not _typed(request.params):
        return Early(None, waiting), b""
    hello = hello_of(request.params, capabilities)
    return Early(hello, waiting[end + 1:]), encode_event(Answer(request.id, hello.result))


def _typed(params: dict[str, Any]) -> bool:
    """Whether the params fit `InitializeParams` (else the dispatcher refuses them, -32602)."""
    try:
        msgspec.convert(params, InitializeParams)
    except msgspec.ValidationError:
        return False
    return True
