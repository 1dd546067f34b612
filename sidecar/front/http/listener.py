"""The HTTP listener under the front: settings, the socket, and the limits that act
before a request reaches a handler.

Owns: the settings the operator gave (address, token, caps, timeouts; environment
overrides for the caps), the listening socket, the header timeout (a connection that
has not finished its first request's headers in time is closed), the idle keep-alive
timeout, and an orderly stop. Refuses to start without a token or on a non-loopback
address without `--allow-remote` (both said in words, before anything listens).
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

from sidecar.front.http.admission import GuardError, check_bind, load_tokens, split_bind

__all__ = ["FrontSettings", "Listener", "GuardError"]

log = logging.getLogger(__name__)


def _number(environ: Mapping[str, str], name: str, default: float) -> float:
    raw = environ.get(name, "")
    try:
        value = float(raw) if raw else default
    except ValueError:
        log.warning("%s ignored: it must be a number", name)
        return default
    return value if value > 0 else default


@dataclass(frozen=True)
class FrontSettings:
    host: str
    port: int
    token: str = field(repr=False)
    allow_remote: bool = False
    body_cap: int = 16 * 1024 * 1024
    max_sessions: int = 64
    idle_seconds: float = 1800.0
    header_seconds: float = 10.0
    body_seconds: float = 30.0
    keepalive_seconds: float = 15.0
    drain_seconds: float = 10.0
    allowed_hosts: tuple[str, ...] = ()
    more_tokens: tuple[str, ...] = field(default=(), repr=False)  # further lines of the token file

    @property
    def tokens(self) -> tuple[str, ...]:
        """Every accepted bearer token; each is its own caller identity."""
        return (self.token, *self.more_tokens)

    @property
    def address(self) -> str:
        """`host:port` as the operator would write it (an IPv6 host in brackets)."""
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    @classmethod
    def chosen(cls, bind: str, *, allow_remote: bool = False, token_file: str | None = None,
               token_env: str | None = None, environ: Mapping[str, str] | None = None) -> FrontSettings:
        """From what the operator chose (`--http`, `--allow-remote`, `--token-file`,
        `--token-env`); OMB_HTTP_* variables tune the limits. GuardError on refusal."""
        environ = os.environ if environ is None else environ
        host, port = split_bind(bind)
        check_bind(host, allow_remote)
        token, *more = load_tokens(token_file, token_env, environ)
        return cls(
            host, port, token, allow_remote, more_tokens=tuple(more),
            body_cap=int(_number(environ, "OMB_HTTP_BODY_BYTES", cls.body_cap)),
            max_sessions=int(_number(environ, "OMB_HTTP_MAX_SESSIONS", cls.max_sessions)),
            idle_seconds=_number(environ, "OMB_HTTP_SESSION_IDLE_SECONDS", cls.idle_seconds),
            header_seconds=_number(environ, "OMB_HTTP_HEADER_SECONDS", cls.header_seconds),
            body_seconds=_number(environ, "OMB_HTTP_BODY_SECONDS", cls.body_seconds),
            drain_seconds=_number(environ, "OMB_HTTP_DRAIN_SECONDS", cls.drain_seconds),
            allowed_hosts=tuple(h for h in environ.get("OMB_HTTP_ALLOWED_HOSTS", "").split(",") if h.strip()),
        )


def _bound_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


class Listener:
    """Serves an aiohttp application on one socket, with a header timeout per connection."""

    def __init__(self, app: web.Application, settings: FrontSettings) -> None:
        self.settings = settings
        self._runner = web.AppRunner(
            app,
            handler_cancellation=True,  # a client that hangs up cancels its handler
            keepalive_timeout=settings.keepalive_seconds,
            shutdown_timeout=2.0,  # in-flight calls were drained before this
            access_log=None,
        )
        self._server: asyncio.AbstractServer | None = None
        self.port = 0

    async def start(self) -> int:
        await self._runner.setup()
        sock = _bound_socket(self.settings.host, self.settings.port)
        self.port = sock.getsockname()[1]
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self._protocol_factory(), sock=sock)
        return self.port

    def _protocol_factory(self) -> Callable[[], RequestHandler]:
        server = self._runner.server
        assert server is not None
        loop = asyncio.get_running_loop()
        seconds = self.settings.header_seconds

        def make() -> RequestHandler:
            handler = server()
            loop.call_later(seconds, _close_if_no_request, handler)
            return handler

        return make

    async def stop_accepting(self) -> None:
        if self._server is not None:
            self._server.close()

    async def close(self) -> None:
        await self.stop_accepting()
        if self._server is not None:
            await self._server.wait_closed()
        await self._runner.cleanup()


def _close_if_no_request(handler: RequestHandler) -> None:
    """The header timeout: no complete request line and headers yet, so the peer is cut off."""
    # aiohttp counts a request once its headers are parsed; it has no header timeout itself.
    if getattr(handler, "_request_count", 1) == 0 and handler.transport is not None:
        handler.transport.close()
