"""The composition root: config -> face (pool, catalog, gate) -> front, all owned by
one task group. Shutdown on stdin EOF, SIGINT or SIGTERM stops every child in order.
"""

from __future__ import annotations

import argparse
import logging
import signal

import anyio

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


async def run_stdio(config: SidecarConfig, redactor: Redactor) -> None:
    """Serve one engine on stdin/stdout until it goes away."""
    face = Face(config)
    for alias, reason in config.skipped:
        log.warning("upstream '%s' is missing from this face: %s", alias, reason)
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
    """Serve Streamable HTTP (`--http HOST:PORT`): the HTTP front is not built yet."""
    raise SystemExit("omb-sidecar: the HTTP front is not available yet")
