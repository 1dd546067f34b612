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
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

from sidecar.concurrency import finish
from sidecar.front.http.admission import GuardError, check_bind, load_tokens, split_bind
from sidecar.settings import Settings, process_settings

__all__ = ["FrontSettings", "GuardError", "Handler", "Hot", "Listener", "Served", "serve_listening"]

log = logging.getLogger(__name__)


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
               token_env: str | None = None, settings: Settings | None = None) -> FrontSettings:
        """From what the operator chose (`--http`, `--allow-remote`, `--token-file`,
        `--token-env`); the OMB_HTTP_* variables (`sidecar.settings`) tune the limits.
        GuardError on refusal."""
        settings = process_settings() if settings is None else settings
        host, port = split_bind(bind)
        check_bind(host, allow_remote)
        token, *more = load_tokens(token_file, token_env, settings.environ)
        tuning = settings.http
        for note in tuning.notes:
            log.warning("%s", note)
        return cls(
            host, port, token, allow_remote, more_tokens=tuple(more),
            body_cap=int(tuning.body_bytes or cls.body_cap),
            max_sessions=int(tuning.max_sessions or cls.max_sessions),
            idle_seconds=tuning.idle_seconds or cls.idle_seconds,
            header_seconds=tuning.header_seconds or cls.header_seconds,
            body_seconds=tuning.body_seconds or cls.body_seconds,
            drain_seconds=tuning.drain_seconds or cls.drain_seconds,
            allowed_hosts=tuning.allowed_hosts,
        )


def _bound_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]  # the application's requests are `web.Request`s
Hot = Callable[[Handler], Handler]  # given the application's handler, the one a request meets first


class Listener:
    """Serves an aiohttp application on one socket, with a header timeout per connection.
    With `hot`, each request first meets the handler `hot` makes of the application's own
    (a front's one busy route, taken before the router: `HttpFront.hot`)."""

    def __init__(self, app: web.Application, settings: FrontSettings, hot: Hot | None = None) -> None:
        self.settings = settings
        self._hot = hot
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
        if self._hot is not None:  # before any connection: each reads the handler as it is made
            server = self._runner.server
            assert server is not None
            # An AppRunner's server makes `web.Request`s (its request factory is the application's).
            server.request_handler = self._hot(server.request_handler)  # type: ignore[assignment]
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


class Served(Protocol):
    """What one listener serves (the HTTP fronts of `sidecar.front.gateway.Fronts`)."""

    async def run(self) -> None:
        """Their background work (pools, idle expiry, health), until cancelled."""

    async def drain(self, why: str) -> None:
        """Let the calls in flight finish (at most the drain time), refusing new ones."""

    async def close(self) -> None:
        """Close every session; the faces stop talking to engines."""


async def serve_listening(app: web.Application, served: Served, settings: FrontSettings, banner: str,
                          until: Callable[[], Awaitable[str]], hot: Hot | None = None) -> None:
    """The one listener start-up, for the single front and the gateway alike: listen on
    `settings.address` (refused in words, before anything runs, when the address cannot
    be had), log `banner` with the port, run `served` until `until` returns why it
    stops (a signal), then drain, close and stop listening, even if cancelled meanwhile.
    `hot`: see `Listener`."""
    listener = Listener(app, settings, hot)
    try:
        port = await listener.start()
    except OSError as exc:
        await listener.close()
        raise SystemExit(f"omb-sidecar: cannot listen on {settings.address}: {exc.strerror}") from None
    log.info(banner, settings.host, port)
    async with asyncio.TaskGroup() as group:
        running = group.create_task(served.run(), name="served fronts")
        try:
            await served.drain(await until())
        finally:
            await finish(served.close())
            await finish(listener.close())
            running.cancel()
