"""`subscriptions/listen` (2026-07-28): how a stateless engine hears that the face's
tools, prompts or resources changed, on one long-lived answer stream.

Owns the listener: an engine session registered with the face (so it receives the
face's change notifications like any session) that keeps only the kinds the engine
asked for, tags each with the subscription id, and opens the stream with
`notifications/subscriptions/acknowledged` naming what is honoured. Refuses (by
leaving it out of the acknowledgement) what it cannot honour: per-resource updates.
"""

from __future__ import annotations

from typing import Any

import msgspec

from sidecar.front.face import Face
from sidecar.front.session import EngineSession
from sidecar.wire import RequestId, encode_notification, encode_result
from sidecar.wire.outbox import FrameQueue, Shedding

__all__ = ["Listen", "SUBSCRIPTION_KEY"]

SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"
# filter key -> the notification it lets through
KINDS = {
    "toolsListChanged": "notifications/tools/list_changed",
    "promptsListChanged": "notifications/prompts/list_changed",
    "resourcesListChanged": "notifications/resources/list_changed",
}


class _Method(msgspec.Struct):
    method: str | None = None


_method = msgspec.json.Decoder(_Method)


class Listen:
    """One open `subscriptions/listen` stream: frames to write, in order; None ends it."""

    def __init__(self, face: Face, ident: RequestId, wanted: object) -> None:
        self.face = face
        self.ident = ident
        asked = wanted if isinstance(wanted, dict) else {}
        self.honoured = {key: True for key in KINDS if asked.get(key) is True}
        self.allowed = frozenset(KINDS[key] for key in self.honoured)
        self.frames = FrameQueue(Shedding("a subscriptions/listen stream"))
        self.session = EngineSession(self._take)
        self.session.announced = True
        self._pending: set[str] = set()  # kinds waiting in `frames`, not yet written

    def open(self) -> None:
        self.frames.put(encode_notification("notifications/subscriptions/acknowledged", {
            "notifications": self.honoured, "_meta": self._meta()}))
        self.face.sessions.append(self.session)

    def close(self) -> None:
        """Leave the face; a graceful end gets the closing result."""
        if self.session in self.face.sessions:
            self.face.sessions.remove(self.session)
            self.frames.put(encode_result(self.ident, {"_meta": self._meta(), "resultType": "complete"}))
            self.frames.put(None)

    def written(self, frame: bytes) -> None:
        """`frame` left for the engine: a later change of its kind is news again."""
        try:
            method = _method.decode(frame).method
        except msgspec.DecodeError:
            return
        self._pending.discard(method or "")

    def _meta(self) -> dict[str, Any]:
        return {SUBSCRIPTION_KEY: self.ident}

    def _take(self, frame: bytes) -> None:
        try:
            method = _method.decode(frame).method
        except msgspec.DecodeError:
            return
        if method in self.allowed and method not in self._pending:
            assert method is not None
            # A change not yet written says all another would: one of each kind waits.
            self._pending.add(method)
            self.frames.offer(encode_notification(method, {"_meta": self._meta()}), method)
