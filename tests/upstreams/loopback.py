"""How a test's MCP server serves HTTP: its ASGI app on 127.0.0.1 (port 0 picks a free
one), the port printed as `PORT <n>` on stdout for the test that started it, then uvicorn
on that socket until the process is stopped; and the ASGI layer that makes a server one
of a single protocol era (the other era's requests refused as unsupported versions)."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from typing import Any


async def serve_on_loopback(app: Any, port: int = 0) -> None:
    await serve_built_on_loopback(lambda _port: app, port)


async def serve_built_on_loopback(build: Callable[[int], Any], port: int = 0) -> None:
    """Bind first, then build the app from the port it got (a server that names its own
    origin), print the port, serve."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)  # a client that connects before uvicorn starts waits in the backlog
    bound = sock.getsockname()[1]
    app = build(bound)
    print(f"PORT {bound}", flush=True)
    await uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on")).serve(sockets=[sock])


async def whole_body(receive: Any) -> tuple[bytes, Any]:
    """An ASGI request's whole body, and a `receive` that gives it to the app again."""
    chunks, more = [], True
    while more:
        message = await receive()
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    body = b"".join(chunks)
    replayed = False

    async def replay() -> dict[str, Any]:
        nonlocal replayed
        if replayed:
            return dict(await receive())
        replayed = True
        return {"type": "http.request", "body": body, "more_body": False}

    return body, replay


def refusing_versions(app: Any, refused: Callable[[Any], list[str] | None]) -> Any:
    """ASGI: a POSTed request for which `refused` names the revisions the server does have is
    answered with the unsupported-version error (-32022) listing them, before `app` sees it,
    as a server of one era only answers; anything else reaches `app` with its body replayed."""

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        body, replay = await whole_body(receive)
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        supported = refused(parsed)
        if supported is not None:
            error = {"code": -32022, "message": "unsupported protocol version", "data": {"supported": supported}}
            answer = {"jsonrpc": "2.0", "id": parsed.get("id") if isinstance(parsed, dict) else None, "error": error}
            await send({"type": "http.response.start", "status": 400,
                        "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": json.dumps(answer).encode()})
            return
        await app(scope, replay, send)

    return wrapped


def refusing_initialize(app: Any) -> Any:
    """ASGI: `initialize` answered with an error, as a 2026-07-28-only server does."""
    return refusing_versions(app, lambda request: ["2026-07-28"] if isinstance(request, dict)
                             and request.get("method") == "initialize" else None)


def serve_2026_only(build: Callable[[Any], Any]) -> None:
    """A 2026-07-28-only test server's `main`: `--events FILE` handed to `build` (which makes
    the mcp server from an event writer), `initialize` refused, served on loopback until
    stopped."""
    import argparse
    import sys

    import anyio

    from tests.upstreams.event_file import Events

    parser = argparse.ArgumentParser()
    parser.add_argument("--events", default=None)
    options = parser.parse_args()
    app = refusing_initialize(build(Events(options.events)).streamable_http_app())
    try:
        anyio.run(serve_on_loopback, app)
    except KeyboardInterrupt:
        sys.exit(0)
