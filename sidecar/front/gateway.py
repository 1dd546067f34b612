"""A shared gateway: one HTTP listener, one face per bot, nothing shared by accident.

Owns the composition: for each bot of `gateway.bots`, its own config cut
(`sidecar.config.bots.for_bot`), its own face (pool, catalog, gate, held results), its
own HTTP front at `/bots/<id>/mcp` admitting only that bot's bearer; beside them
`/health`, and `/metrics` (when on) behind the operator's token, labelled by bot id. A
bot's upstream children are its own (started once for each bot that uses them), so one
bot's env and header values never reach another's processes, answers or errors.

Owns the gateway's life too: every pool, idle expiry and health schedule run in one
task group; SIGTERM drains every front, then closes them.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import anyio
from aiohttp import web

from sidecar.config import SidecarConfig, tracing_wanted
from sidecar.config.bots import bot_token, for_bot
from sidecar.errors import ConfigError
from sidecar.front.http.admission import HostRule, caller_identity
from sidecar.front.http.console_door import ConsoleScene, MountConsole, is_console_path
from sidecar.front.http.listener import FrontSettings, Listener
from sidecar.front.http.routes import HttpFront, _refuse
from sidecar.front.http.sessions import SessionTable
from sidecar.hub.assemble import build_face
from sidecar.hub.face import Face
from sidecar.mounts.plan import mountable
from sidecar.redact import Redactor
from sidecar.store.share import share_held

__all__ = ["Gateway", "HealthWatch", "WatchHealth", "serve_gateway"]

log = logging.getLogger(__name__)


class HealthWatch(Protocol):
    """Watches one face's servers until cancelled (`sidecar_admin.health_schedule`)."""

    async def run(self) -> None: ...


# Given by the CLI only when `health.schedule` is set: the runtime never imports the admin package.
WatchHealth = Callable[[Face, SidecarConfig], HealthWatch]


class Gateway:
    def __init__(self, config: SidecarConfig, redactor: Redactor, settings: FrontSettings,
                 watch_health: WatchHealth | None = None, console: MountConsole | None = None) -> None:
        self.settings = settings
        self.watch_health = watch_health
        self.rule = HostRule(settings.host, settings.allowed_hosts)
        self.fronts: dict[str, HttpFront] = {}
        self.configs: dict[str, SidecarConfig] = {}
        self.metrics: Any = None
        for bot in config.gateway.bots:
            token = bot_token(bot, os.environ)
            redactor.add([token])
            bot_config = self.configs[bot.id] = for_bot(config, bot)
            face = build_face(mountable(bot_config, watch_health is not None and bot_config.health.schedule))
            if config.store.url:
                share_held(face.gate, config.store, f"{bot.id}/{face.name}")
            self.fronts[bot.id] = HttpFront(face, redactor, dataclasses.replace(settings, token=token, more_tokens=()))
        if config.metrics.enabled:
            self._attach_metrics()
        faces = {bot: front.face for bot, front in self.fronts.items()}
        self.console = console(ConsoleScene(faces, config, settings, redactor, gateway=True)) if console else None

    def _attach_metrics(self) -> None:
        from sidecar.front.metrics import FrontMetrics, MetricsSource

        self.metrics = FrontMetrics()
        for bot, front in self.fronts.items():
            self.metrics.watch(MetricsSource(front.face, _counter(front.table), name=bot))

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._admit], client_max_size=self.settings.body_cap)
        app.router.add_get("/health", self._health)
        if self.metrics is not None:
            app.router.add_get("/metrics", self._metrics)
        for bot, front in self.fronts.items():
            app.add_subapp(f"/bots/{bot}/", front.app())
        if self.console is not None:
            self.console.add_routes(app)
        return app

    @web.middleware
    async def _admit(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """The gateway's own routes; a bot's routes are admitted by that bot's front."""
        if request.path.startswith("/bots/"):
            bot = request.path.split("/", 3)[2]
            if bot not in self.fronts:  # answered like a face that is not served, in JSON-RPC words
                return _refuse(404, "Not Found: no such face")
            return await handler(request)  # type: ignore[no-any-return]
        if not self.rule.host_allowed(request.headers.get("Host")):
            return _refuse(403, "Forbidden: this Host is not served here")
        if not self.rule.origin_allowed(request.headers.get("Origin")):
            return _refuse(403, "Forbidden: this Origin is not allowed")
        if self.console is not None and is_console_path(request.path):
            return await handler(request)  # type: ignore[no-any-return]  # the page admits by its cookie
        if request.path != "/health" and caller_identity(request.headers.get("Authorization"),
                                                         self.settings.tokens) is None:
            return _refuse(401, "Unauthorized: a valid bearer token is required", {"WWW-Authenticate": "Bearer"})
        return await handler(request)  # type: ignore[no-any-return]

    async def _health(self, request: web.Request) -> web.Response:
        return web.Response(text="ok\n")

    async def _metrics(self, request: web.Request) -> web.Response:
        from sidecar.front.metrics import CONTENT_TYPE

        return web.Response(body=self.metrics.render(), headers={"Content-Type": CONTENT_TYPE})

    async def run(self) -> None:
        """Every pool, idle expiry and health schedule, until cancelled."""
        async with anyio.create_task_group() as group:
            for bot, front in self.fronts.items():
                group.start_soon(front.face.pool.run, name=f"upstream pool of {bot}")
                group.start_soon(front.expire_idle, name=f"idle sessions of {bot}")
                if self.watch_health is not None and self.configs[bot].health.schedule:
                    group.start_soon(self.watch_health(front.face, self.configs[bot]).run, name=f"health of {bot}")

    async def drain(self) -> None:
        async with anyio.create_task_group() as group:
            for front in self.fronts.values():
                group.start_soon(front.drain)

    async def close(self) -> None:
        for front in self.fronts.values():
            front.face.closing = True
            await front.table.close_all()


def _counter(table: SessionTable) -> Callable[[], int]:
    return lambda: len(table.sessions)


async def serve_gateway(config: SidecarConfig, redactor: Redactor, settings: FrontSettings,
                        until: Callable[[], Awaitable[None]], watch_health: WatchHealth | None = None,
                        console: MountConsole | None = None) -> None:
    """Serve every bot of `gateway.bots` until `until` returns (a signal), then drain and stop."""
    redactor.add(config.secrets())
    try:
        gateway = Gateway(config, redactor, settings, watch_health, console)
    except ConfigError as exc:
        raise SystemExit(f"omb-sidecar: {exc.message}") from None
    tracing = None
    if tracing_wanted(os.environ):
        from sidecar.front.tracing import start_tracing

        tracing = start_tracing([front.face for front in gateway.fronts.values()], "tcp")
    listener = Listener(gateway.app(), settings)
    try:
        port = await listener.start()
    except OSError as exc:
        await listener.close()
        raise SystemExit(f"omb-sidecar: cannot listen on {settings.address}: {exc.strerror}") from None
    log.info("gateway serving %d bots at http://%s:%d/bots/<id>/mcp", len(gateway.fronts), settings.host, port)
    async with anyio.create_task_group() as group:
        group.start_soon(gateway.run, name="gateway")
        try:
            await until()
            await gateway.drain()
        finally:
            with anyio.CancelScope(shield=True):
                await gateway.close()
                await listener.close()
                if tracing is not None:
                    tracing.shutdown()
            group.cancel_scope.cancel()
