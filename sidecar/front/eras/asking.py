"""How a 2026-07-28 server's questions reach the engine of the call that got them: as a
request on the engine's session (stdio, an HTTP session), or, for a stateless engine,
as an input-required round of its held call (`sidecar.front.eras.held`, which takes
the same request and turns it into a round).

Owns the checks before asking, from what the engine declared and never from the call:
the capability the question needs (`elicitation`, URL mode included; `sampling`;
`roots`), else `InputRefused` naming the missing one; the wait for the answer, bounded
(no answer in time is cancelled toward the engine and refused); an engine's error answer
refused with its words.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, cast

from sidecar.hub.session import CAPABILITY_OF_REQUEST, EngineSession
from sidecar.wire import Relayed
from sidecar.wire.versions import MODERN_VERSION

if TYPE_CHECKING:
    from sidecar.gate.asked import EngineAsker

__all__ = ["EngineAnswer", "engine_asker", "missing_capability"]


class EngineAnswer:
    """Stands where an upstream connection would in the session's relay map: the
    engine's answer settles a future instead of going to an upstream."""

    def __init__(self, future: asyncio.Future[tuple[str, Any]]) -> None:
        self.future = future

    def respond(self, ident: int | str, result: Any) -> None:
        if not self.future.done():
            self.future.set_result(("result", result))

    def respond_error(self, ident: int | str, code: int, message: str) -> None:
        if not self.future.done():
            self.future.set_result(("error", message))


def missing_capability(session: EngineSession, method: str, params: dict[str, Any]) -> str | None:
    """The capability this question needs that the engine did not declare, in words."""
    capability = CAPABILITY_OF_REQUEST.get(method)
    if capability is None:
        return f"{method} is not a question a client answers"
    if not session.declared(capability):
        return f"the client did not declare the {capability} capability"
    if method == "elicitation/create" and params.get("mode") == "url":
        declared = session.client_capabilities.get("elicitation") or {}
        if not isinstance(declared.get("url"), dict):
            return "the client did not declare the elicitation capability's URL mode"
    return None


def for_the_engine(session: EngineSession, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The question as the engine's revision has it: a session-era engine needs an
    `elicitationId` on a URL-mode elicitation, which a 2026-07-28 server's embedded
    question need not carry (the round's key names it there)."""
    if method != "elicitation/create" or params.get("mode") != "url" or "elicitationId" in params:
        return params
    if session.protocol_version == MODERN_VERSION:
        return params
    import secrets  # only a URL-mode question to a session-era engine: off the start path

    return {**params, "elicitationId": "omb-" + secrets.token_hex(8)}


def engine_asker(session: EngineSession, seconds: float) -> EngineAsker:
    async def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
        from sidecar.gate.asked import InputRefused  # a server's first question loads it: off the start path

        missing = missing_capability(session, method, params)
        if missing is not None:
            raise InputRefused(missing)
        if not session.admit(None):
            raise InputRefused("the client is not reading what it is sent")
        future: asyncio.Future[tuple[str, Any]] = asyncio.get_running_loop().create_future()
        ident = session.relayed.allocate((cast(Any, EngineAnswer(future)), 0))
        session.emit(Relayed(ident, method, for_the_engine(session, method, params)))
        try:
            async with asyncio.timeout(seconds):
                kind, value = await future
        except TimeoutError:
            session.notify("notifications/cancelled", {"requestId": ident, "reason": "no answer in time"})
            raise InputRefused(f"the client did not answer within {seconds:g} s") from None
        finally:
            session.relayed.release(ident)
        if kind == "error":
            raise InputRefused(f"the client answered with an error: {value}")
        return value if isinstance(value, dict) else {}

    return ask
