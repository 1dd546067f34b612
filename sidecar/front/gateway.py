"""A shared gateway: one HTTP listener, one face per bot, nothing shared by accident.

Owns the gateway's routes: for each bot of `gateway.bots`, its own config cut
(`sidecar.config.bots.for_bot`), its own face (pool, catalog, gate, held results; built by
the composition root, `sidecar.root.Root.face`), its own HTTP front at `/bots/<id>/mcp`
admitting only that bot's bearer; beside them `/health`, and `/metrics` (when on) behind
the operator's token, labelled by bot id. A bot's upstream children are its own (started
once for each bot that uses them), so one bot's env and header values never reach
another's processes, answers or errors.

Owns `Fronts` too, the life of the HTTP fronts one listener serves (the gateway's, or the
single front of `--http`): every pool, idle expiry and health schedule run in one task
group; at a signal every front drains, then closes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from aiohttp import web

from sidecar.config import SidecarConfig
from sidecar.config.bots import bot_token, for_bot
from sidecar.errors import ConfigError
from sidecar.front.http.admission import HostRule
from sidecar.front.http.console_door import ConsoleScene, MountConsole, is_console_path
from sidecar.front.http.listener import FrontSettings, serve_listening
from sidecar.front.http.routes import HttpFront, _refuse, admitted
from sidecar.front.http.sessions import SessionTable
from sidecar.hub.face import Face
from sidecar.redact import Redactor

__all__ = ["Faces", "Fronts", "Gateway", "HealthWatch", "WatchHealth", "serve_gateway"]

log = logging.getLogger(__name__)


class HealthWatch(Protocol):
    """Watches one face's servers until cancelled (`sidecar_admin.health_schedule`)."""

    async def run(self) -> None: ...


# Given by the CLI only when `health.schedule` is set: the runtime never imports the admin package.
WatchHealth = Callable[[Face, SidecarConfig], HealthWatch]


class Faces(Protocol):
    """The composition root as a front sees it (`sidecar.root.Root`)."""

    metrics: Any

    @property
    def environ(self) -> Mapping[str, str]: ...

    def face(self, config: SidecarConfig, label: str | None = None) -> Face: ...

    def health(self, face: Face, config: SidecarConfig) -> HealthWatch | None: ...

    def show(self, face: Face, sessions: Any, label: str | None = None) -> None: ...


class Fronts:
    """The HTTP fronts one listener serves, by name, and their life (`listener.Served`)."""

    def __init__(self, fronts: dict[str, HttpFront], watches: dict[str, HealthWatch | None]) -> None:
        self.fronts = fronts
        self.watches = watches

    async def run(self) -> None:
        """Every pool, idle expiry and health schedule, until cancelled."""
        async with asyncio.TaskGroup() as group:
            for name, front in self.fronts.items():
                group.create_task(front.face.pool.run(), name=f"upstream pool of {name}")
                group.create_task(front.expire_idle(), name=f"idle sessions of {name}")
                watch = self.watches.get(name)
                if watch is not None:
                    group.create_task(watch.run(), name=f"health of {name}")

    async def drain(self, why: str) -> None:
        async with asyncio.TaskGroup() as group:
            for front in self.fronts.values():
                group.create_task(front.drain(why))

    async def close(self) -> None:
        for front in self.fronts.values():
            front.face.close()
            await front.table.close_all()


class Gateway:
    def __init__(self, config: SidecarConfig, redactor: Redactor, settings: FrontSettings, root: Faces,
                 console: MountConsole | None = None) -> None:
        self.settings = settings
        self.rule = HostRule(settings.host, settings.allowed_hosts)
        fronts: dict[str, HttpFront] = {}
        watches: dict[str, HealthWatch | None] = {}
        for bot in config.gateway.bots:
            token = bot_token(bot, root.environ)
            redactor.add([token])
            bot_config = for_bot(config, bot)
            face = root.face(bot_config, bot.id)
            fronts[bot.id] = front = HttpFront(face, redactor, dataclasses.replace(settings, token=token, more_tokens=()))
            root.show(face, _counter(front.table), bot.id)
            watches[bot.id] = root.health(face, bot_config)
        self.fronts = Fronts(fronts, watches)
        self.metrics = root.metrics
        faces = {bot: front.face for bot, front in fronts.items()}
        self.console = console(ConsoleScene(faces, config, settings, redactor, gateway=True)) if console else None

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._admit], client_max_size=self.settings.body_cap)
        app.router.add_get("/health", self._health)
        if self.metrics is not None:
            app.router.add_get("/metrics", self._metrics)
        for bot, front in self.fronts.fronts.items():
            app.add_subapp(f"/bots/{bot}/", front.app())
        if self.console is not None:
            self.console.add_routes(app)
        return app

    @web.middleware
    async def _admit(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """The gateway's own routes; a bot's routes are admitted by that bot's front."""
        if request.path.startswith("/bots/"):
            bot = request.path.split("/", 3)[2]
            if bot not in self.fronts.fronts:  # answered like a face that is not served, in JSON-RPC words
                return _refuse(404, "Not Found: no such face")
            return await handler(request)  # type: ignore[no-any-return]
        open_path = request.path == "/health" or (self.console is not None and is_console_path(request.path))
        caller = admitted(request, self.rule, self.settings.tokens, open_path)  # the console admits by its cookie
        if isinstance(caller, web.StreamResponse):
            return caller
        return await handler(request)  # type: ignore[no-any-return]

    async def _health(self, request: web.Request) -> web.StreamResponse:
        return web.Response(text="ok\n")

    async def _metrics(self, request: web.Request) -> web.StreamResponse:
        from sidecar.gate.observers.metrics import CONTENT_TYPE

        return web.Response(body=self.metrics.render(), headers={"Content-Type": CONTENT_TYPE})


def _counter(table: SessionTable) -> Callable[[], int]:
    return lambda: len(table.sessions)


async def serve_gateway(config: SidecarConfig, redactor: Redactor, settings: FrontSettings, root: Faces,
                        until: Callable[[], Awaitable[str]], console: MountConsole | None = None) -> None:
    """Serve every bot of `gateway.bots` until `until` returns (a signal), then drain and stop."""
    redactor.add(config.secrets())
    try:
        gateway = Gateway(config, redactor, settings, root, console)
    except ConfigError as exc:
        raise SystemExit(f"omb-sidecar: {exc.message}") from None
    banner = f"gateway serving {len(gateway.fronts.fronts)} bots at http://%s:%d/bots/<id>/mcp"
    await serve_listening(gateway.app(), gateway.fronts, settings, banner, until)
