"""Two promises about what upstreams announce, kept at the face's one door for them
(`Face.upstream_notification`).

Owns: the fault log of notifications the sidecar could not handle (the notification ends
there; the reader that handed it up keeps reading, so the upstream keeps serving), and
the choice of who hears `notifications/resources/updated` (the sessions that asked for
that URI only: a stdio or HTTP session by `resources/subscribe`, a 2026-07-28 listen
stream by its filter). Refuses to log a notification's words or params: they may carry
secrets; the kind of fault and the method are enough to find it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import msgspec

from sidecar.hub.session import EngineSession
from sidecar.upstream import Connection

__all__ = ["UPDATED", "NoticeFaults", "cancel_relayed", "decoded", "subscribers", "updated_uri"]

log = logging.getLogger(__name__)

UPDATED = "notifications/resources/updated"


class NoticeFaults:
    """Counts, by upstream, the notifications that could not be handled. The first of each
    upstream is a warning; the rest are debug lines, so a server that repeats a bad
    notice cannot flood the log."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def failed(self, alias: str, method: str, exc: Exception) -> None:
        count = self.counts[alias] = self.counts.get(alias, 0) + 1
        log.log(logging.WARNING if count == 1 else logging.DEBUG,
                "upstream '%s': its %s could not be handled (%s); that notification was dropped, "
                "the upstream keeps serving (%d dropped so far; the first is logged as a warning)",
                alias, method, type(exc).__name__, count)
        log.debug("the notification failed with this traceback", exc_info=exc)


def updated_uri(params: Any) -> str | None:
    """The URI a decoded `resources/updated` names, or None when it names none."""
    uri = params.get("uri") if isinstance(params, dict) else None
    return uri if isinstance(uri, str) else None


def subscribers(sessions: Iterable[EngineSession], uri: str) -> Iterator[EngineSession]:
    """The sessions that asked for updates of `uri` (by the URI the upstream sent, before
    any secret in it is hidden)."""
    return (session for session in sessions if uri in session.resource_uris)


def decoded(params: msgspec.Raw | None) -> Any:
    """A notification's params, decoded (a fault raised here ends that notification)."""
    return msgspec.json.decode(params) if params else None


def cancel_relayed(sessions: Iterable[EngineSession], conn: Connection, params: msgspec.Raw | None,
                   clean: Callable[[Any], Any]) -> None:
    """An upstream gave up on a request it had asked an engine: the session it was relayed
    to is told, under that session's own id, and forgets it. Params it cannot read end it."""
    try:
        decoded_params = msgspec.json.decode(params) if params else {}
    except msgspec.DecodeError:
        return
    wanted = decoded_params.get("requestId") if isinstance(decoded_params, dict) else None
    for session in sessions:
        for ident, (owner, upstream_id) in list(session.relayed.items()):
            if owner is conn and upstream_id == wanted:
                session.relayed.release(ident)
                reason = clean(decoded_params.get("reason", ""))
                session.notify("notifications/cancelled", {"requestId": ident, "reason": reason})
