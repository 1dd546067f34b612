"""Which engine call a server's request belongs to, when the request says so.

stdio carries no link from a server's request (an elicitation, a sampling, roots) to the
call it is asked for, and several engine sessions may have calls in flight on one
connection. A server may name the call in the request's `_meta`: by the progress token
the sidecar sent the call with, or by the id it sent the call under
(`io.modelcontextprotocol/related-request`: `{"requestId": id}`). Owns reading that link
and finding the session whose call it names; the face falls back to its own rule when
there is none. No I/O.
"""

from __future__ import annotations

from typing import Any

import msgspec

from sidecar.hub.session import EngineSession
from sidecar.upstream import Connection

__all__ = ["RELATED_REQUEST", "linked_session"]

RELATED_REQUEST = "io.modelcontextprotocol/related-request"


class _Link(msgspec.Struct):
    progressToken: Any = None  # noqa: N815 - the wire's names
    related: Any = msgspec.field(name=RELATED_REQUEST, default=None)


class _Linking(msgspec.Struct):
    meta: _Link | None = msgspec.field(name="_meta", default=None)


_linking = msgspec.json.Decoder(_Linking)


def linked_session(conn: Connection, params: msgspec.Raw, sessions: list[EngineSession],
                   capability: str) -> EngineSession | None:
    """The session whose call a server's request names: by the id the sidecar sent that
    call under (`_meta["io.modelcontextprotocol/related-request"].requestId`), or by the
    progress token it was sent with (`_meta.progressToken`). None when it names none
    (stdio carries no link of its own), or a call no session that declared `capability`
    has in flight (the face's own rule then decides)."""
    try:
        link = _linking.decode(params).meta if params else None
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if link is None:
        return None
    related = link.related.get("requestId") if isinstance(link.related, dict) else None
    ident = related if type(related) is int else conn.request_of_token(link.progressToken)
    if ident is None:
        return None
    return next((s for s in sessions if s.declared(capability) and any(
        sent is not None and sent[0] is conn and sent[1] == ident for sent in s.in_flight.values())), None)
