"""JSON-RPC 2.0 on msgspec, with no I/O: line framing, strict decoding, envelopes, ids.

Every name is re-exported lazily (PEP 562): the CLI decodes the engine's `initialize`
(`sidecar.wire.hello`) before the framing, its salvage patterns and asyncio (`Outbox`)
are loaded.
"""

from sidecar import names_on_first_use

TYPE_CHECKING = False  # `typing` waits too: the early answers import `sidecar.wire.plain_hello`
if TYPE_CHECKING:
    from sidecar.wire.events import Answer, ErrorAnswer, Event, Notice, Relayed, encode_event
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


# name -> the module that defines it, imported on first use
_HOMES = {
    **dict.fromkeys(("Answer", "ErrorAnswer", "Event", "Notice", "Relayed", "encode_event"), "events"),
    "LineFramer": "framing",
    "IdAllocator": "ids",
    **dict.fromkeys(("TOO_DEEP", "EngineMessage", "FrameRejected", "Notification", "Request", "RequestId", "Response",
                     "UpstreamFrame", "decode_engine_frame", "decode_upstream_frame", "encode_error",
                     "encode_error_raw", "encode_notification", "encode_request", "encode_result"), "jsonrpc"),
    "Outbox": "outbox",
}


__getattr__ = names_on_first_use(__name__, _HOMES)
