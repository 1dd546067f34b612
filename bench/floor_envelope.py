"""What both Python floors (`floor_proxy.py`, `thread_floor.py`) decode and write: the one
place their per-message work is written, so the two differ only in how they wait for lines.

Owns the envelope (msgspec, `params`, `result` and `error` kept raw), the forwarded request
line (renumbered) and the answer line (numbered back). Imported by the floors as a sibling
module: each runs as a script, with this folder first on its path.
"""

from __future__ import annotations

import msgspec

__all__ = ["Envelope", "answer_line", "decode", "request_line"]


class Envelope(msgspec.Struct):
    id: int | str | None = None
    method: str | None = None
    params: msgspec.Raw = msgspec.Raw(b"")
    result: msgspec.Raw = msgspec.Raw(b"")
    error: msgspec.Raw = msgspec.Raw(b"")


decode = msgspec.json.Decoder(Envelope).decode
_encode = msgspec.json.encode


def request_line(ident: int, request: Envelope) -> bytes:
    """`request` as the upstream gets it: numbered `ident`, its params as they came."""
    params = bytes(request.params) or b"{}"
    return b'{"jsonrpc":"2.0","id":%d,"method":%b,"params":%b}\n' % (ident, _encode(request.method), params)


def answer_line(asked: int | str | None, answer: Envelope) -> bytes:
    """`answer` as the engine gets it: numbered back to the id it `asked` with."""
    body = b'"result":' + bytes(answer.result) if answer.result else b'"error":' + bytes(answer.error)
    return b'{"jsonrpc":"2.0","id":%b,%b}\n' % (_encode(asked), body)
