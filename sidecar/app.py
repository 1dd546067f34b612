"""The composition root: config -> face (pool, catalog, gate) -> front, all owned by
one task group. Shutdown on stdin EOF, SIGINT or SIGTERM stops every child in order.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal

import anyio
import msgspec

from sidecar.config import SidecarConfig
from sidecar.front import Dispatcher, EngineSession, Face, Jobs, open_stdout, serve_stdio
from sidecar.redact import Redactor

__all__ = ["run_http", "run_stdio"]

log = logging.getLogger(__name__)


async def _cancel_on_signal(scope: anyio.CancelScope, face: Face) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for received in signals:
            log.info("signal %s: shutting down", received)
            face.closing = True
            scope.cancel()
            return


def mountable(config: SidecarConfig) -> SidecarConfig:
    """The config less the servers this face leaves out (unfilled, duplicate, failed its
    last check), each said once."""
    from sidecar.servers.health import leave_out

    plan = leave_out(config)
    for alias, reason in config.skipped:
        log.warning("upstream '%s' is missing from this face: %s", alias, reason)
    for left in plan.left_out:
        (log.warning if left.announce else log.info)("upstream '%s' is left out: %s", left.alias, left.reason)
    return msgspec.structs.replace(config, servers=plan.mounted)


async def run_stdio(config: SidecarConfig, redactor: Redactor) -> None:
    """Serve one engine on stdin/stdout until it goes away."""
    face = Face(mountable(config))
    async with anyio.create_task_group() as group:
        group.start_soon(face.pool.run, name="upstream pool")
        group.start_soon(_cancel_on_signal, group.cancel_scope, face, name="signals")
        send = await open_stdout()
        session = EngineSession(send)
        face.sessions.append(session)

        jobs = Jobs()
        dispatcher = Dispatcher(face, session, jobs.spawn, redactor)
        try:
            await serve_stdio(dispatcher.feed)
            log.info("the engine closed stdin: shutting down")
        finally:
            face.closing = True
            with anyio.CancelScope(shield=True):
                await jobs.aclose()
            group.cancel_scope.cancel()


async def run_http(config: SidecarConfig, options: argparse.Namespace, redactor: Redactor) -> None:
    """Serve Streamable HTTP (`--http HOST:PORT`) until SIGTERM or SIGINT, then drain and stop."""
    from sidecar.front.http import HttpFront
    from sidecar.front.http_listener import FrontSettings, GuardError, Listener
    from sidecar.upstream.proxying import proxy_secrets
    from sidecar.upstream.webclient import server_secrets

    try:
        settings = FrontSettings.from_options(options)
    except GuardError as exc:
        raise SystemExit(f"omb-sidecar: {exc}") from None
    redactor.add([settings.token, *proxy_secrets(os.environ)])
    redactor.add(secret for server in config.servers for secret in server_secrets(server))
    face = Face(mountable(config))
    front = HttpFront(face, redactor, settings)
    listener = Listener(front.app(), settings)
    try:
        port = await listener.start()
    except OSError as exc:
        await listener.close()
        raise SystemExit(f"omb-sidecar: cannot listen on {options.http}: {exc.strerror}") from None
    log.info("serving Streamable HTTP at http://%s:%d/mcp", settings.host, port)
    async with anyio.create_task_group() as group:
        group.start_soon(face.pool.run, name="upstream pool")
        group.start_soon(front.expire_idle, name="idle sessions")
        try:
            await _wait_for_signal()
            await front.drain()
        finally:
            face.closing = True
            with anyio.CancelScope(shield=True):
                await front.table.close_all()
                await listener.close()
            group.cancel_scope.cancel()


async def _wait_for_signal() -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for received in signals:
            log.info("signal %s: draining calls in flight, then stopping", received)
            return
