"""The fronts' lives: config -> the composition root -> a face -> a front, each in one
asyncio task group. The faces are built by `sidecar.root.Root` (store, metrics, traces,
health schedule, confirmation and the per-server snapshot, the same way for stdio, HTTP
and each bot of a gateway), from the settings the CLI read once (`sidecar.settings`).
Shutdown on stdin EOF, SIGINT or SIGTERM stops every child in order.
First every request still in flight gets its one answer, an error naming the shutdown
(`sidecar.front.shutdown`; on HTTP after the drain), and written out; a process stopped
by a signal then exits with 128 + the signal's number (143 for SIGTERM, 130 for SIGINT).

One concurrency dialect everywhere: asyncio's own TaskGroup, `asyncio.timeout` and
signal handlers, with `sidecar.concurrency` for what asyncio leaves to us (see there).
"""

from __future__ import annotations

import asyncio
import logging
import signal
from typing import TYPE_CHECKING, Any

from sidecar.concurrency import Jobs, finish
from sidecar.config import SidecarConfig
from sidecar.front import Dispatcher, open_stdout, serve_stdio
from sidecar.front.shutdown import answer_in_flight, signal_name, signalled_exit
from sidecar.hub import EngineSession, Face
from sidecar.redact import Redactor
from sidecar.root import Root
from sidecar.settings import Settings
from sidecar.upstream.spawn import discard_early
from sidecar.wire.hello import Early, Hello

if TYPE_CHECKING:
    from sidecar.wire.plain_hello import ListedAhead
    from sidecar.front.gateway import WatchHealth
    from sidecar.front.http.console_door import MountConsole
    from sidecar.front.http.listener import FrontSettings

__all__ = ["run_http", "run_stdio"]

log = logging.getLogger(__name__)

_FLUSH_SECONDS = 2.0  # the last answers' time to reach the engine at shutdown, at most
# At the end of stdin (a script that pipes its requests in, then closes), the calls still in
# flight may finish for this long before they get the shutdown error; a signal ends it at once.
_EOF_SETTLE_SECONDS = 5.0


async def _signalled(then: str = "shutting down") -> int:
    """Return the number of the first SIGTERM or SIGINT (logged, with what happens `then`)."""
    loop = asyncio.get_running_loop()
    received: asyncio.Future[int] = loop.create_future()
    def note(signum: int) -> None:
        if not received.done():
            received.set_result(signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, note, int(sig))
    try:
        signum = await received
        log.info("signal %s received: %s", signal_name(signum), then)
        return signum
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)


async def run_stdio(config: SidecarConfig, redactor: Redactor, settings: Settings, early: Early | None = None,
                    listed: ListedAhead | None = None) -> None:
    """Serve one engine on stdin/stdout until it goes away. `config` is already the
    mountable one, its stdio upstreams perhaps started early (see the CLI); `early` is what
    the CLI read of stdin before the loop ran, its `initialize` perhaps answered; `listed`:
    this start's listing inputs, and the first listing the entry point sent from the
    listing snapshot (`sidecar.front.listing_kept`)."""
    root = Root(settings, "pipe")
    face = root.face(config, mounted=True)
    async with asyncio.TaskGroup() as group:
        pool = group.create_task(face.pool.run(), name="upstream pool")
        stdout = await open_stdout()
        session = EngineSession(emit=stdout.emit, admit=stdout.admits, answer=stdout.answer)
        face.sessions.append(session)
        if early is not None and early.hello is not None:
            _greeted(session, early.hello)
        jobs = Jobs()
        dispatcher = Dispatcher(face, session, jobs.spawn, redactor, finds_held=True)
        jobs.hold_from(dispatcher)  # the plain calls in flight, found where each went when settling or closing
        prefix = early.rest if early is not None else b""
        engine = group.create_task(serve_stdio(dispatcher.feed, stdout, dispatcher.take, prefix), name="engine stdin")
        signals = group.create_task(_signalled(), name="signals")
        tasks = [engine, signals, pool]
        if listed is not None:
            from sidecar.front.listing_kept import keep_first_listing

            tasks.append(group.create_task(keep_first_listing(face, session, listed, stdout.buffered),
                                           name="listing snapshot"))
        try:
            await asyncio.wait((engine, signals), return_when=asyncio.FIRST_COMPLETED)
            if engine.done():
                log.info("the engine closed stdin: shutting down once the calls in flight end")
                await jobs.settle(_EOF_SETTLE_SECONDS, signals)
        finally:
            face.close()
            signum = signals.result() if signals.done() and not signals.cancelled() else None
            answer_in_flight(session, "the engine closed stdin" if signum is None else signal_name(signum))
            await finish(stdout.flushed(_FLUSH_SECONDS))
            await finish(jobs.aclose())
            for task in tasks:
                task.cancel()
    discard_early()
    root.shutdown()
    signalled_exit(signum)


def _greeted(session: EngineSession, hello: Hello) -> None:
    """The session as the dispatcher leaves it after answering `initialize` with `hello`."""
    session.protocol_version = hello.version
    session.client_capabilities = hello.client_capabilities
    session.client_info = hello.client_info
    session.announced = True


async def run_http(config: SidecarConfig, front: FrontSettings, redactor: Redactor, settings: Settings,
                   watch_health: WatchHealth | None = None, console: MountConsole | None = None) -> None:
    """Serve Streamable HTTP (`--http HOST:PORT`: one face, or one per bot of
    `gateway.bots`) until SIGTERM or SIGINT, then drain and stop. `watch_health` (given
    when `health.schedule` is set) watches each face's servers; `console` (given when
    `console.enabled` is set) adds the operator's page."""
    from sidecar.front.gateway import serve_gateway
    from sidecar.upstream.proxying import proxy_secrets
    from sidecar.upstream.webclient import server_secrets

    redactor.add([*front.tokens, *proxy_secrets(settings.environ)])
    redactor.add(secret for server in config.servers for secret in server_secrets(server))
    root = Root(settings, "tcp", metrics=config.metrics.enabled, watch_health=watch_health, shares_store=True)
    received: list[int] = []

    async def until() -> str:
        received.append(await _signalled("draining calls in flight, then stopping"))
        return signal_name(received[0])

    try:
        if config.gateway.bots:
            await serve_gateway(config, redactor, front, root, until, console)
        else:
            await _serve_one(config, front, redactor, root, until, console)
    finally:
        root.shutdown()
    signalled_exit(received[0] if received else None)


async def _serve_one(config: SidecarConfig, settings: FrontSettings, redactor: Redactor, root: Root,
                     until: Any, console: MountConsole | None) -> None:
    """The single face of `--http` at `/mcp`, served as the gateway serves each bot's."""
    from sidecar.front.gateway import Fronts
    from sidecar.front.http.listener import serve_listening
    from sidecar.front.http.routes import HttpFront

    face = root.face(config)
    front = HttpFront(face, redactor, settings, _console_site(console, face, config, settings, redactor), root.metrics)
    root.show(face, lambda: len(front.table.sessions))
    fronts = Fronts({face.name: front}, {face.name: root.health(face, config)})
    await serve_listening(front.app(), fronts, settings, "serving Streamable HTTP at http://%s:%d/mcp", until,
                          front.hot)


def _console_site(console: MountConsole | None, face: Face, config: SidecarConfig, settings: FrontSettings,
                  redactor: Redactor) -> Any:
    if console is None:
        return None
    from sidecar.front.http.console_door import ConsoleScene

    return console(ConsoleScene({config.bot.id: face}, config, settings, redactor))
