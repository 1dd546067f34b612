"""One engine session: what the engine declared, what it is waiting for, and the
requests upstreams asked it to answer.

Owns the engine side of id routing: engine ids of calls in flight (for cancellation),
and fresh ids for requests relayed to the engine (sampling, elicitation, roots), mapped
back to (upstream connection, upstream id). What it sends are typed events
(`sidecar.wire.events`); the front that owns the session encodes them at its edge.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from sidecar.errors import INTERNAL_ERROR
from sidecar.upstream import Connection
from sidecar.wire import IdAllocator, RequestId
from sidecar.wire.events import Answer, AnswerResult, Event, Notice, Relayed, encode_event

__all__ = ["EngineSession", "CAPABILITY_OF_REQUEST"]

# A request an upstream sends to the client is relayed only if the engine declared this.
CAPABILITY_OF_REQUEST = {
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
    "roots/list": "roots",
}


def _always(method: str | None) -> bool:
    return True


def _encoding_for(send: Callable[[bytes], None]) -> Callable[[Event], None]:
    def emit(event: Event) -> None:
        send(encode_event(event))

    return emit


def _answering(emit: Callable[[Event], None]) -> Callable[[RequestId, AnswerResult], None]:
    def answer(ident: RequestId, result: AnswerResult) -> None:
        emit(Answer(ident, result))

    return answer


class EngineSession:
    """`emit` takes every event toward the engine (given `send` instead, each event is
    encoded as its JSON-RPC frame and handed to it); `admit(method)` (None: a request)
    says whether a notification or relayed request may go now, or the sink is too full
    and it is dropped (notifications) or refused to the upstream (requests). Answers are
    never asked about: they always go."""

    # A session that serves one call only (a 2026-07-28 engine's held call): it is handed
    # the questions of its own call, never another call's (sidecar.hub.face._asker_for).
    call_bound = False

    def __init__(self, send: Callable[[bytes], None] | None = None, admit: Callable[[str | None], bool] = _always,
                 *, emit: Callable[[Event], None] | None = None,
                 answer: Callable[[RequestId, AnswerResult], None] | None = None) -> None:
        if emit is None:
            assert send is not None, "an engine session needs emit (events) or send (frames)"
            emit = _encoding_for(send)
        self.emit = emit
        # `emit(Answer(ident, result))`, or the front's own way to say it (stdio writes an
        # upstream's result spliced under the id, with no event made: `EngineStdout.answer`)
        self.answer: Callable[[RequestId, AnswerResult], None] = answer or _answering(emit)
        self.admit = admit
        self.protocol_version: str | None = None
        self.client_capabilities: dict[str, Any] = {}
        self.client_info: dict[str, Any] = {}
        self.announced = False  # initialize answered: notifications may flow
        self.in_flight: dict[RequestId, tuple[Connection, int] | None] = {}
        self.relayed: IdAllocator[tuple[Connection, int | str]] = IdAllocator()
        # What held results are bound to: this session; for stateless (2026-07-28)
        # requests, one scope shared by the face, so a handle outlives its request.
        self.held_scope: object = self
        # The resources whose `notifications/resources/updated` this session asked for
        # (`resources/subscribe`, or a listen stream's honoured filter): no other reach it.
        self.resource_uris: set[str] = set()

    def declared(self, capability: str) -> bool:
        return isinstance(self.client_capabilities.get(capability), dict)

    def declared_url_elicitation(self) -> bool:
        elicitation = self.client_capabilities.get("elicitation")
        return isinstance(elicitation, dict) and isinstance(elicitation.get("url"), dict)

    def notify(self, method: str, params: Any = None) -> None:
        if self.announced and self.admit(method):
            self.emit(Notice(method, params))

    def relay_request(self, conn: Connection, upstream_id: int | str, method: str, params: msgspec.Raw) -> None:
        if not self.admit(None):
            conn.respond_error(upstream_id, INTERNAL_ERROR, f"the client is not reading what it is sent: {method} refused")
            return
        ident = self.relayed.allocate((conn, upstream_id))
        self.emit(Relayed(ident, method, params if params else None))

    def cancel(self, engine_id: RequestId) -> bool:
        """The engine gave up on `engine_id`: cancel it upstream; no answer will be sent."""
        if engine_id not in self.in_flight:
            return False
        sent = self.in_flight.pop(engine_id)
        if sent is not None:
            conn, upstream_id = sent
            conn.cancel(upstream_id)
        return True
