"""JSON-RPC 2.0 on msgspec, with no I/O: line framing, strict decoding, envelopes, ids.

`Outbox` (the one part on asyncio) loads on first use: the CLI decodes the engine's
`initialize` before asyncio is imported (`sidecar.wire.hello`).
"""

from typing import TYPE_CHECKING, Any

from sidecar.wire.framing import LineFramer
from sidecar.wire.ids import IdAllocator
from sidecar.wire.jsonrpc import (
    TOO_DEEP,
    EngineMessage,
    FrameRejected,
    Notification,
    Request,
    RequestId,
    Response,
    UpstreamFrame,
    decode_engine_frame,
    decode_upstream_frame,
    encode_error,
    encode_error_raw,
    encode_notification,
    encode_request,
    encode_result,
)
from sidecar.wire.events import Answer, ErrorAnswer, Event, Notice, Relayed, encode_event

if TYPE_CHECKING:
    from sidecar.wire.outbox import Outbox

__all__ = [
    "TOO_DEEP",
    "Answer",
    "ErrorAnswer",
    "Event",
    "Notice",
    "Relayed",
    "encode_event",
    "EngineMessage",
    "FrameRejected",
    "IdAllocator",
    "LineFramer",
    "Outbox",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "UpstreamFrame",
    "decode_engine_frame",
    "decode_upstream_frame",
    "encode_error",
    "encode_error_raw",
    "encode_notification",
    "encode_request",
    "encode_result",
]


def __getattr__(name: str) -> Any:
    if name != "Outbox":
        raise AttributeError(f"module 'sidecar.wire' has no attribute {name!r}")
    from sidecar.wire.outbox import Outbox

    globals()["Outbox"] = Outbox
    return Outbox
