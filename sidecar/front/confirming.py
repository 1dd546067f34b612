"""How the gate can reach the person behind this engine: the front's side of confirmation.

Owns the choice, made from what the engine declared (never from the call itself): live
`elicitation/create` requests on a session (stdio, HTTP sessions) when the engine
declared elicitation; the input-required round on a 2026-07-28 request whose envelope
declared it; nothing otherwise. Also owns the request the sidecar itself sends to the
engine and the wait for its answer, bounded; no answer in time is cancelled and denies.

Names the caller a sealed state is bound to (`caller_of`): the identity the held results
of the same request are bound to, so a state asked for by one caller is refused to
every other, on every replica: a stateless request's bearer identity, or else one
engine session (a random name of its own, which no other session or process has).
"""

from __future__ import annotations

import asyncio
import secrets
import weakref
from typing import Any, cast

from sidecar.gate.confirmation.stage import Asker, Confirmer
from sidecar.gate.budget.held import CallerScope
from sidecar.gate.confirmation.sealed import StateClaim
from sidecar.hub.session import EngineSession
from sidecar.wire import Relayed, Request
from sidecar.wire.versions import MODERN_VERSION

__all__ = ["caller_of", "confirmer_for"]


class _Answer:
    """Stands where an upstream connection would in the session's relay map: the engine's
    answer to the sidecar's own request settles a future instead of going upstream."""

    def __init__(self, future: asyncio.Future[Any]) -> None:
        self.future = future

    def respond(self, ident: int | str, result: Any) -> None:
        if not self.future.done():
            self.future.set_result(result)

    def respond_error(self, ident: int | str, code: int, message: str) -> None:
        if not self.future.done():
            self.future.set_result(None)


def session_asker(session: EngineSession) -> Asker:
    async def ask(params: dict[str, Any], seconds: float) -> Any:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        ident = session.relayed.allocate((cast(Any, _Answer(future)), 0))
        session.emit(Relayed(ident, "elicitation/create", params))
        try:
            async with asyncio.timeout(seconds):
                return await future
        except TimeoutError:
            session.relayed.release(ident)
            session.notify("notifications/cancelled", {"requestId": ident, "reason": "no answer in time"})
            return None
        finally:
            session.relayed.release(ident)

    return ask


_SESSION_NAMES: weakref.WeakKeyDictionary[EngineSession, str] = weakref.WeakKeyDictionary()


def caller_of(session: EngineSession) -> str:
    """Who is asking, as held results know it: the stateless caller's identity, or this
    engine session (named at random the first time it is asked)."""
    scope = session.held_scope
    if isinstance(scope, CallerScope):
        return "caller:" + scope.identity
    name = _SESSION_NAMES.get(session)
    if name is None:
        name = _SESSION_NAMES[session] = "session:" + secrets.token_hex(16)
    return name


def confirmer_for(session: EngineSession, req: Request, relayed: StateClaim | None = None) -> Confirmer | None:
    """`relayed`: the claim of a relayed round's state (sidecar.front.eras.relayed), which
    says whether the person already allowed this call."""
    if session.protocol_version == MODERN_VERSION:
        if not session.declared("elicitation"):
            return None
        if relayed is not None:
            return Confirmer(stateless=True, caller=caller_of(session), confirmed=relayed.confirmed)
        return Confirmer(stateless=True, state=req.params.get("requestState"),
                         responses=req.params.get("inputResponses"), caller=caller_of(session))
    if session.declared("elicitation"):
        return Confirmer(session_asker(session))
    return None
