"""What comes up a URL channel, with no sockets here: each server message read once and
handed to the connection, and the faults a channel reports in the server's place.

Owns the read of a body or an event's data: at most one depth scan for the whole body
(none for a body too short to nest past the limit), one decode per message (arrays split
first), a repair only where msgspec refused the text; then the error object scrubbed of
the server's address and header values (and any credential echoed in a result taken
out), and the frame handed up typed, never as bytes to be read again. Refuses any message nested past the depth limit or over a cap:
the request it answered still ends, with a `TooLarge` fault naming the limit. A request
the channel could not carry ends with its fault (`fault`), never with a made-up frame.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import msgspec

from sidecar.errors import UpstreamUnavailable, refused_unread
from sidecar.upstream.channel import Inbox, Outgoing
from sidecar.wire import TOO_DEEP, UpstreamFrame, decode_upstream_frame
from sidecar.wire.depth import MAX_DEPTH, too_deep
from sidecar.wire.repair import Repair, repair_frame
from sidecar.wire.salvage import EDGE_BYTES, DroppedFrame, salvage

__all__ = ["Replies"]

log = logging.getLogger(__name__)
_messages = msgspec.json.Decoder(list[msgspec.Raw])
Scrub = Callable[[str], str]


def _scrubbed(raw: msgspec.Raw, scrub: Scrub) -> msgspec.Raw:
    text = bytes(raw).decode("utf-8", "replace")
    clean = scrub(text)
    return raw if clean == text else msgspec.Raw(clean.encode())


class Replies:
    """Server messages to the connection, read once; faults for the requests they could not end."""

    def __init__(self, inbox: Inbox, scrub: Scrub, scrub_result: Scrub | None = None) -> None:
        self._inbox = inbox
        self._scrub = scrub
        self._scrub_result = scrub_result
        self._initialize_id: int | str | None = None
        self._discover_id: int | str | None = None
        self.on_discovered: Callable[[UpstreamFrame], None] | None = None  # the probe's answer, read
        self.on_initialized: Callable[[str], None] | None = None
        self.on_initialize_refused: Callable[[], None] | None = None
        self.repaired_values = 0
        self._repair_logged = False

    def watch_initialize(self, ident: int | str | None) -> None:
        self._initialize_id = ident

    def watch_discover(self, ident: int | str | None) -> None:
        self._discover_id = ident

    def fault(self, out: Outgoing, fault: UpstreamUnavailable) -> None:
        """The request could not be carried: it ends with `fault`, soon (never inside the
        caller's send)."""
        if out.is_request:
            assert out.id is not None
            if out.id == self._initialize_id and self.on_initialize_refused is not None:
                self.on_initialize_refused()  # a 2026-07-28-only server may refuse by HTTP status
            asyncio.get_running_loop().call_soon(self._inbox.fault, out.id, fault)

    def refused(self, notice: DroppedFrame, out: Outgoing | None = None) -> int | str | None:
        """A message refused unread. When it is (or may be) the answer to `out`, `out` fails
        naming the limit, and its id is returned; else the connection is told."""
        found = salvage(notice.head, notice.tail)
        if out is not None and out.is_request and (found.id == out.id or (found.id is None and found.method is None)):
            self.fault(out, refused_unread(notice.size, notice.why))
            return out.id
        self._inbox.dropped(notice)
        return None

    def stream_refused(self, notice: DroppedFrame) -> None:
        """A message refused unread on the server's own stream: the connection decides."""
        self.refused(notice)

    def deliver_body(self, body: bytes, out: Outgoing | None = None) -> set[int | str]:
        """Deliver a JSON body (one message or an array) that came for `out` (None: from the
        server's own stream); returns the ids it answered (or ended, refused)."""
        if len(body) > MAX_DEPTH and too_deep(body):  # a shorter body cannot nest past the limit (`Connection.feed`)
            ident = self.refused(DroppedFrame(len(body), TOO_DEEP, body[:EDGE_BYTES], body[-EDGE_BYTES:]), out)
            return set() if ident is None else {ident}
        stripped = body.lstrip()
        if stripped[:1] == b"[":  # a batch (2025-03-26 servers): split, then each read once
            try:
                messages = [bytes(m) for m in _messages.decode(stripped)]
            except msgspec.DecodeError:
                return set()
        else:
            messages = [stripped]
        answered: set[int | str] = set()
        for message in messages:
            frame = self.read(message)
            if frame is not None:
                self.hand_up(frame, len(message))
                if frame.method is None and frame.id is not None:
                    answered.add(frame.id)
        return answered

    def read(self, message: bytes) -> UpstreamFrame | None:
        """One message decoded (repaired if it must be) and scrubbed; None when it is not
        JSON-RPC at all (it is then handed up as bytes, for the connection to count)."""
        frame = decode_upstream_frame(message)
        if frame is None:
            repair = repair_frame(message) if message.lstrip()[:1] == b"{" else None
            frame = decode_upstream_frame(repair.frame) if repair is not None else None
            if frame is None or repair is None:
                self._inbox.feed(message)
                return None
            self._note_repair(repair)
        if frame.error:
            return msgspec.structs.replace(frame, error=_scrubbed(frame.error, self._scrub))
        if self._scrub_result is not None and (frame.result or frame.params):
            return msgspec.structs.replace(frame, result=_scrubbed(frame.result, self._scrub_result),
                                           params=_scrubbed(frame.params, self._scrub_result))
        return frame

    def hand_up(self, frame: UpstreamFrame, size: int) -> None:
        if frame.method is None and frame.id is not None and frame.id == self._discover_id:
            if self.on_discovered is not None:
                self.on_discovered(frame)
        elif frame.method is None and frame.id is not None and frame.id == self._initialize_id:
            if frame.result:
                self._learn_version(frame.result)
            elif self.on_initialize_refused is not None:
                self.on_initialize_refused()
        self._inbox.frame(frame, size)

    def _note_repair(self, repair: Repair) -> None:
        self.repaired_values += repair.values
        if not self._repair_logged:
            self._repair_logged = True
            log.warning("a URL upstream sent text that is not valid (%s); replaced, the rest kept "
                        "(logged once per connection)", ", ".join(repair.reasons))

    def _learn_version(self, result: msgspec.Raw) -> None:
        try:
            value = msgspec.json.decode(result)
        except msgspec.DecodeError:
            return
        version = value.get("protocolVersion") if isinstance(value, dict) else None
        if isinstance(version, str) and self.on_initialized is not None:
            self.on_initialized(version)

    def deliver_error_for(self, out: Outgoing, body: bytes) -> bool:
        """An HTTP error whose body is the JSON-RPC error for this request: pass it on."""
        if out.id is None or not body.strip() or len(body) > MAX_DEPTH and too_deep(body):
            return False
        frame = decode_upstream_frame(body)
        if frame is None or frame.id != out.id or not frame.error:
            return False
        self.hand_up(msgspec.structs.replace(frame, error=_scrubbed(frame.error, self._scrub)), len(body))
        return True
