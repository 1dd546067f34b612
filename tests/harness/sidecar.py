"""The harness itself: a whole sidecar core in memory, built the way every front builds it.

`in_memory(servers, **config)` parses a config whose `mcpServers` are the given fake
servers (plus any entry keys the test adds), builds the face with `build_face` and the
fakes' opener, runs the pool in a task, and hands the test an `InMemorySidecar` to open
engine sessions on. No subprocess, no socket, no fixed sleep: frames move on loop turns,
every wait is bounded, and a test marked `@pytest.mark.looptime` runs on virtual time
(start timeouts, deadlines, restart backoff and the circuit cost no real seconds).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import msgspec

from sidecar.config import ServerConfig, SidecarConfig, parse_config
from sidecar.hub import Face, build_face
from sidecar.redact import Redactor
from sidecar.upstream import Upstream
from sidecar.upstream.channel import Channel, Inbox
from tests.harness.engine import FakeEngine
from tests.harness.upstream import WAIT, FakeServer

__all__ = ["InMemorySidecar", "in_memory"]


class InMemorySidecar:
    """The face under test, its fake upstreams by alias, and the engines opened on it."""

    def __init__(self, face: Face, servers: Mapping[str, FakeServer], whole: SidecarConfig | None = None) -> None:
        self.face = face
        self.servers = dict(servers)
        self.engines: list[FakeEngine] = []
        self.whole = whole or face.config  # the config before any server was left out

    def mount_late(self, alias: str) -> None:
        """Mount a server left out at start, as the health schedule does when it recovers."""
        self.face.mount(next(s for s in self.whole.servers if s.alias == alias))

    @property
    def config(self) -> SidecarConfig:
        return self.face.config

    def upstream(self, alias: str) -> FakeServer:
        return self.servers[alias]

    async def engine(self, capabilities: dict[str, Any] | None = None, settle: bool = True, **how: Any) -> FakeEngine:
        """A new engine session, initialized; once every upstream is past its first start
        unless `settle` is False."""
        if settle:
            await self.settled()
        engine = FakeEngine(self.face, Redactor(self.whole.secrets()), **how)  # the process redactor: every configured secret
        self.engines.append(engine)
        await engine.initialize(capabilities)
        return engine

    async def settled(self) -> None:
        async with asyncio.timeout(WAIT):
            await self.face.pool.wait_first_start()

    async def state_of(self, alias: str, *states: str) -> str:
        """Wait (bounded) until upstream `alias` is in one of `states`; that state."""
        upstream = self.face.pool.get(alias)
        assert upstream is not None, alias
        async with asyncio.timeout(WAIT):
            while upstream.state not in states:
                await self.next_change()
        return upstream.state

    def next_change(self) -> Awaitable[None]:
        """Awaitable once the face has taken in the next upstream change (a state or a
        listing) and rebuilt what the engine sees. Call it before causing the change."""
        changed = asyncio.Event()

        def seen(upstream: Upstream) -> None:
            changed.set()

        self.face.watchers.append(seen)

        async def wait() -> None:
            try:
                async with asyncio.timeout(WAIT):
                    await changed.wait()
            finally:
                self.face.watchers.remove(seen)

        return wait()


def _document(servers: Mapping[str, FakeServer], entries: Mapping[str, dict[str, Any]],
              config: dict[str, Any]) -> dict[str, Any]:
    mcp = {alias: {"command": f"in-memory-{alias}", **entries.get(alias, {})} for alias in servers}
    return {"mcpServers": mcp, **config}


@asynccontextmanager
async def in_memory(
    servers: Mapping[str, FakeServer],
    *,
    entries: Mapping[str, dict[str, Any]] | None = None,
    env: Mapping[str, str] | None = None,
    left_out: Sequence[str] = (),
    **config: Any,
) -> AsyncIterator[InMemorySidecar]:
    """Run a sidecar core over `servers` (alias -> fake); `entries` adds keys to their
    `mcpServers` entries; `left_out` servers are configured but not started (as after a
    failed check: `mount_late` brings one in); other keyword arguments are top-level
    config sections."""
    whole = parse_config(_document(servers, entries or {}, config), env or {})
    parsed = msgspec.structs.replace(whole, servers=[s for s in whole.servers if s.alias not in left_out])

    async def opener(server: ServerConfig, inbox: Inbox) -> Channel:
        return await servers[server.alias].open(server, inbox)

    async with _running(build_face(parsed, opener), servers, whole) as sidecar:
        yield sidecar


@asynccontextmanager
async def over_real_upstreams(document: dict[str, Any], env: Mapping[str, str] | None = None) -> AsyncIterator[InMemorySidecar]:
    """The core in memory over REAL upstreams: the document's `mcpServers` opened as a
    running sidecar opens them (child processes, HTTP and SSE on 127.0.0.1), the engine
    still in memory. For what only a real transport shows (its faults, its reads)."""
    whole = parse_config(document, env or {})
    async with _running(build_face(whole), {}, whole) as sidecar:
        yield sidecar


@asynccontextmanager
async def _running(face: Face, servers: Mapping[str, FakeServer], whole: SidecarConfig) -> AsyncIterator[InMemorySidecar]:
    sidecar = InMemorySidecar(face, servers, whole)
    pool = asyncio.create_task(face.pool.run(), name="harness pool")
    await asyncio.sleep(0)  # one loop turn, no time: the pool is running (a late mount may join it)
    try:
        yield sidecar
    finally:
        face.closing = True
        for engine in sidecar.engines:
            await engine.aclose()
        pool.cancel()
        await asyncio.wait([pool])
        if not pool.cancelled() and pool.exception() is not None:
            raise pool.exception()  # type: ignore[misc]
