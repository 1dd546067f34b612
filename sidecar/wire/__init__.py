"""JSON-RPC 2.0 on msgspec, with no I/O: line framing, strict decoding, envelopes, ids."""

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
