"""The conformance fixture served as a server of one protocol era only (`--era session`
or `--era stateless`), as servers that have not moved to 2026-07-28, or have only that
revision, are: an ASGI layer answers a request of the other era with the
unsupported-version error before the SDK sees it, so a client (the sidecar) then speaks
the era the server has. `--era both`, the default, lets everything through.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["ERA", "one_era"]

MODERN = "2026-07-28"
ERA = {"name": "both"}  # set from the command line by conformance_server


def _refused(request: Any) -> bool:
    """A request this fixture's era does not serve: at `session`, a 2026-07-28 one (its
    header, or `server/discover`); at `stateless`, `initialize`."""
    if not isinstance(request, dict):
        return False
    if ERA["name"] == "stateless":
        return request.get("method") == "initialize"
    meta = (request.get("params") or {}).get("_meta") if isinstance(request.get("params"), dict) else None
    modern = isinstance(meta, dict) and meta.get("io.modelcontextprotocol/protocolVersion") == MODERN
    return modern or request.get("method") == "server/discover"


def one_era(app: Any) -> Any:
    """ASGI: a request of the other era answered with the unsupported-version error, as a
    server of one era only does (`--era session|stateless`); its clients then speak the
    era it has."""

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        chunks, more = [], True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        if _refused(parsed):
            supported = [MODERN] if ERA["name"] == "stateless" else ["2025-11-25"]
            error = {"code": -32022, "message": "unsupported protocol version", "data": {"supported": supported}}
            await send({"type": "http.response.start", "status": 400,
                        "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body",
                        "body": json.dumps({"jsonrpc": "2.0", "id": parsed.get("id"), "error": error}).encode()})
            return
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if replayed:
                return dict(await receive())
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await app(scope, replay, send)

    return wrapped
