"""The composition root: config -> face -> front, all owned by one task group. The face
(pool, gate, catalog holder and hub) is built by `sidecar.hub.build_face`, the one
assembly every front, the tests' harness and the benchmarks share. Shutdown on stdin EOF, SIGINT or SIGTERM stops every child in order.
First every request still in flight gets its one answer, an error naming the shutdown
(`sidecar.front.shutdown`; on HTTP after the drain), and written out; a process stopped
by a signal then exits with 128 + the signal's number (143 for SIGTERM, 130 for SIGINT).

The stdio path runs on asyncio's own TaskGroup (see `sidecar.concurrency`); the HTTP
path, which loads aiohttp anyway, uses anyio's task groups and signal receiver.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from typing import TYPE_CHECKING, Any

from sidecar.concurrency import Jobs, finish
from sidecar.config import SidecarConfig
from sidecar.front import Dispatcher, open_stdout, serve_stdio
from sidecar.front.shutdown import answer_in_flight, signal_name, signalled_exit
from sidecar.hub import EngineSession, Face, build_face
from sidecar.mounts.plan import mountable
from sidecar.redact import Redactor
from sidecar.upstream.spawn import discard_early
from sidecar.wire.hello import Early, Hello

if TYPE_CHECKING:
    from sidecar.front.gateway import WatchHealth
    from sidecar.front.http.console_door import MountConsole
    from sidecar.front.http.listener import FrontSettings

__all__ = ["run_http", "run_stdio"]

log = logging.getLogger(__name__)

_FLUSH_SECONDS = 2.0  # the last answers' time to reach the engine at shutdown, at most
# At the end of stdin (a script that pipes its requests in, then closes), the calls still in
# flight may finish for this long before they get the shutdown error; a signal ends it at once.
_EOF_SETTLE_SECONDS = 5.0


async def _signalled() -> int:
    """Return the number of the first SIGTERM or SIGINT."""
    loop = asyncio.get_running_loop()
    received: asyncio.Future[int] = loop.create_future()
    def note(signum: int) -> None:
        if not received.done():
            received.set_result(signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, note, int(sig))
    try:
        signum = await received
        log.info("signal %s received: shutting down", signal_name(signum))
        return signum
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)


async def run_stdio(config: SidecarConfig, redactor: Redactor, early: Early | None = None) -> None:
    """Serve one engine on stdin/stdout until it goes away. `config` is already the
    mountable one, its stdio upstreams perhaps started early (see the CLI); `early` is what
    the CLI read of stdin before the loop ran, its `initialize` perhaps answered."""
    face = build_face(config)
    tracing = _start_tracing([face], "pipe")
    async with asyncio.TaskGroup() as group:
        pool = group.create_task(face.pool.run(), name="upstream pool")
        stdout = await open_stdout()
        session = EngineSession(emit=stdout.emit, admit=stdout.admits)
        face.sessions.append(session)
        if early is not None and early.hello is not None:
            _greeted(session, early.hello)
        jobs = Jobs()
        dispatcher = Dispatcher(face, session, jobs.spawn, redactor)
        prefix = early.rest if early is not None else b""
        engine = group.create_task(serve_stdio(dispatcher.feed, stdout, dispatcher.take, prefix), name="engine stdin")
        signals = group.create_task(_signalled(), name="signals")
        try:
            await asyncio.wait((engine, signals), return_when=asyncio.FIRST_COMPLETED)
            if engine.done():
                log.info("the engine closed stdin: shutting down once the calls in flight end")
                await jobs.settle(_EOF_SETTLE_SECONDS, signals)
        finally:
            face.closing = True
            signum = signals.result() if signals.done() and not signals.cancelled() else None
            answer_in_flight(session, "the engine closed stdin" if signum is None else signal_name(signum))
            await finish(stdout.flushed(_FLUSH_SECONDS))
            await finish(jobs.aclose())
            for task in (engine, signals, pool):
                task.cancel()
    discard_early()
    if tracing is not None:
        tracing.shutdown()
    signalled_exit(signum)


def _greeted(session: EngineSession, hello: Hello) -> None:
    """The session as the dispatcher leaves it after answering `initialize` with `hello`."""
    session.protocol_version = hello.version
    session.client_capabilities = hello.client_capabilities
    session.client_info = hello.client_info
    session.announced = True


async def run_http(config: SidecarConfig, settings: FrontSettings, redactor: Redactor,
                   watch_health: WatchHealth | None = None, console: MountConsole | None = None) -> None:
    """Serve Streamable HTTP (`--http HOST:PORT`) until SIGTERM or SIGINT, then drain and stop.
    `watch_health` (given when `health.schedule` is set) watches each face's servers;
    `console` (given when `console.enabled` is set) adds the operator's page."""
    import anyio

    from sidecar.front.http.listener import Listener
    from sidecar.front.http.routes import HttpFront
    from sidecar.upstream.proxying import proxy_secrets
    from sidecar.upstream.webclient import server_secrets

    redactor.add([*settings.tokens, *proxy_secrets(os.environ)])
    redactor.add(secret for server in config.servers for secret in server_secrets(server))
    if config.gateway.bots:
        from sidecar.front.gateway import serve_gateway

        received: list[int] = []

        async def until() -> None:
            received.append(await _wait_for_signal())

        await serve_gateway(config, redactor, settings, until, watch_health, console)
        signalled_exit(received[0] if received else None)
        return
    scheduled = watch_health is not None and config.health.schedule  # a failed server is tried again at start
    face = build_face(mountable(config, scheduled))
    front = HttpFront(face, redactor, settings, _console_site(console, face, config, settings, redactor))
    if config.store.url:
        share_store(face, config)
    if config.metrics.enabled:
        _attach_metrics(front)
    tracing = _start_tracing([face], "tcp")
    listener = Listener(front.app(), settings)
    try:
        port = await listener.start()
    except OSError as exc:
        await listener.close()
        raise SystemExit(f"omb-sidecar: cannot listen on {settings.address}: {exc.strerror}") from None
    log.info("serving Streamable HTTP at http://%s:%d/mcp", settings.host, port)
    async with anyio.create_task_group() as group:
        group.start_soon(face.pool.run, name="upstream pool")
        group.start_soon(front.expire_idle, name="idle sessions")
        if watch_health is not None and config.health.schedule:
            group.start_soon(watch_health(face, config).run, name="health schedule")
        signum: int | None = None
        try:
            signum = await _wait_for_signal()
            await front.drain(signal_name(signum))
        finally:
            face.closing = True
            with anyio.CancelScope(shield=True):
                await front.table.close_all()
                await listener.close()
                if tracing is not None:
                    tracing.shutdown()
            group.cancel_scope.cancel()
    signalled_exit(signum)


def _console_site(console: MountConsole | None, face: Face, config: SidecarConfig, settings: FrontSettings,
                  redactor: Redactor) -> Any:
    if console is None:
        return None
    from sidecar.front.http.console_door import ConsoleScene

    return console(ConsoleScene({config.bot.id: face}, config, settings, redactor))


def _start_tracing(faces: list[Face], transport: str) -> Any:
    """OpenTelemetry for `faces` when OTLP export is configured; else None, nothing loaded."""
    from sidecar.config import tracing_wanted

    if not tracing_wanted(os.environ):
        return None
    try:
        from sidecar.front.tracing import start_tracing
    except ImportError:
        log.warning("OTLP export is configured but opentelemetry is not installed (the [otel] extra): no traces")
        return None
    return start_tracing(faces, transport)


def share_store(face: Face, config: SidecarConfig) -> None:
    """Held results of the face's stateless callers go to `store.url` (shared by replicas
    serving the same bot; each caller identity keeps its own)."""
    from sidecar.errors import ConfigError
    from sidecar.store.share import share_held

    try:
        share_held(face.gate, config.store, f"{config.bot.id}/{face.name}")
    except ConfigError as exc:
        raise SystemExit(f"omb-sidecar: {exc.message}") from None


def _attach_metrics(front: Any) -> None:
    try:
        from sidecar.front.metrics import FrontMetrics, MetricsSource
    except ImportError:
        raise SystemExit("omb-sidecar: metrics.enabled needs prometheus_client (pip install 'omb-sidecar[metrics]')") from None
    front.metrics = FrontMetrics()
    front.metrics.watch(MetricsSource(front.face, lambda: len(front.table.sessions)))


async def _wait_for_signal() -> int:
    """The number of the first SIGTERM or SIGINT."""
    import anyio

    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for received in signals:
            log.info("signal %s: draining calls in flight, then stopping", signal_name(int(received)))
            return int(received)
    raise AssertionError("the signal receiver ended")  # it never does
