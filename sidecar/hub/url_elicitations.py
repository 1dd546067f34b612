"""Which engine session was asked each URL-mode elicitation, so that the upstream's
`notifications/elicitation/complete` (the 2025-11-25 notice that the person finished at
the URL) reaches that session alone, never another engine's.

Keyed by the upstream and the elicitation's id (ids are unique per server only). Bounded:
past `LIMIT` remembered questions the oldest is forgotten, and its completion notice is
then dropped, as one for an id nobody was asked is (the revision lets a client ignore an
unknown id; sending it to every session would tell one engine of another's question).
A session-era engine gets the notice on its session. A 2026-07-28 engine has no carrier
for it: its URL elicitations carry no id, and neither its listen stream nor a held call's
round takes this notice, so a held call's session lets it fall (sidecar.front.eras.held).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import msgspec

from sidecar.hub.session import EngineSession

__all__ = ["COMPLETE", "UrlElicitations", "url_mode"]

COMPLETE = "notifications/elicitation/complete"
LIMIT = 1024


class _Asked(msgspec.Struct):
    mode: Any = None
    elicitationId: Any = None  # noqa: N815 - the wire's name


_asked = msgspec.json.Decoder(_Asked)


def _url_id(params: msgspec.Raw | None) -> str | None:
    """The elicitation id of a URL-mode question (read at the top level only)."""
    if not params:
        return None
    try:
        head = _asked.decode(params)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return head.elicitationId if head.mode == "url" and isinstance(head.elicitationId, str) else None


def url_mode(params: msgspec.Raw | None) -> bool:
    """An elicitation's params ask for URL mode (read at the top level only)."""
    if not params:
        return False
    try:
        return bool(_asked.decode(params).mode == "url")
    except (msgspec.DecodeError, msgspec.ValidationError):
        return False


class UrlElicitations:
    def __init__(self) -> None:
        self._asked: OrderedDict[tuple[str, str], EngineSession] = OrderedDict()

    def asked(self, alias: str, params: msgspec.Raw | None, session: EngineSession) -> None:
        """Remember the session a URL-mode question of `alias` went to."""
        ident = _url_id(params)
        if ident is None:
            return
        self._asked[(alias, ident)] = session
        self._asked.move_to_end((alias, ident))
        while len(self._asked) > LIMIT:
            self._asked.popitem(last=False)

    def completed(self, alias: str, params: msgspec.Raw | None) -> tuple[EngineSession, dict[str, Any]] | None:
        """The session to tell and the notice's params, once; None for an id nobody was asked."""
        try:
            decoded = msgspec.json.decode(params) if params else None
        except msgspec.DecodeError:
            return None
        if not isinstance(decoded, dict) or not isinstance(ident := decoded.get("elicitationId"), str):
            return None
        session = self._asked.pop((alias, ident), None)
        return (session, decoded) if session is not None else None
