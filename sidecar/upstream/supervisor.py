"""One configured upstream kept alive: start, handshake, list, watch, restart.

Owns the upstream's state (moved only through the table in `lifecycle`), its backoff and
circuit breaker, and its current connection and listing. A crash fails the calls in flight at once (no retry of
`tools/call`, RELIABILITY rule 5); the upstream restarts with backoff, and after repeated
crashes the circuit opens for a while. One upstream's trouble never touches another's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import msgspec

from sidecar.concurrency import Jobs, finish
from sidecar.config import ServerConfig
from sidecar.errors import SidecarError, SignInNeeded, UpstreamUnavailable, upstream_fault
from sidecar.upstream import lifecycle
from sidecar.upstream.channel import Channel, ChannelOpener, LineChannel
from sidecar.upstream.connection import Connection, PeerHandler
from sidecar.upstream.handshake import (
    BIG_START_SECONDS,
    MODERN_VERSION,
    Handshake,
    Listing,
    answer_of,
    greeted,
    handshake,
    is_big,
    read_listing,
)
from sidecar.upstream.greeting import Greeting
from sidecar.upstream.lifecycle import UpstreamState
from sidecar.upstream.listening import WatchedUris, follow_changes
from sidecar.upstream.transports import open_channel
from sidecar.wire import UpstreamFrame
from sidecar.wire.param_headers import ANNOTATION, ParamHeaders
from sidecar.wire.salvage import DroppedFrame

RequestId = int | str

__all__ = ["Upstream", "UpstreamState", "Backoff", "Prepare"]

# Gets a new tool listing ready before the listener hears of it: (alias, tools) (the trust screen's warm-up).
Prepare = Callable[[str, list[dict[str, Any]]], Awaitable[None]]

log = logging.getLogger(__name__)

# state -> the words a refused call gets ("upstream 'x' <words>")
REFUSALS: dict[UpstreamState, str] = {
    "starting": "is still starting",
    "ready": "",
    "restarting": "is restarting; the call was not run",
    "failed": "could not be started",
    "paused": "crashed repeatedly and is paused for a while",
    "stopped": "is shut down",
    "needs-sign-in": "needs sign-in",  # the reason names `omb-sidecar signin NAME`
}
_LIST_NOTIFICATIONS = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}


class Backoff(msgspec.Struct):
    """Restart delays that double up to a ceiling; the circuit opens after a burst of crashes."""

    first: float = 0.25
    ceiling: float = 30.0
    burst: int = 5
    window: float = 60.0
    pause: float = 60.0
    crashes: list[float] = []

    def next_delay(self, now: float) -> float:
        self.crashes = [t for t in self.crashes if now - t < self.window] + [now]
        if len(self.crashes) >= self.burst:
            self.crashes = []
            return self.pause
        return min(self.ceiling, self.first * 2.0 ** (len(self.crashes) - 1))


class Upstream:
    """The pool's handle on one upstream: its state, connection, listing and supervisor."""

    def __init__(
        self,
        config: ServerConfig,
        handler: PeerHandler,
        on_change: Callable[[Upstream], None],
        start_timeout: float,
        opener: ChannelOpener = open_channel,
        prepare: Prepare | None = None,
    ) -> None:
        self.config = config
        self.alias = config.alias
        self._state: UpstreamState = "starting"
        self.reason = ""
        self.connection: Connection | None = None
        self.info: Handshake | None = None
        self.listing = Listing()
        self.start_timeout = config.start_timeout_seconds or start_timeout
        self.backoff = Backoff()
        self.restarts = 0  # stops of a started connection, for the metrics
        self._handler = handler
        self._on_change = on_change
        self._open = opener
        self._prepare = prepare
        self._child: Channel | None = None
        self._refresh: Jobs | None = None  # re-reads of lists while a connection lives
        self._lines_to: Connection | None = None  # the connection of the current child
        self._was_ready = False  # once ready, a failed start is a restart still to come
        self.watched_uris = WatchedUris()  # resources engines want updates of, when it speaks 2026-07-28

    @property
    def state(self) -> UpstreamState:
        """Where it is in its lifecycle; changed only by `_set_state`, through the table."""
        return self._state

    @property
    def capabilities(self) -> dict[str, Any]:
        return self.info.capabilities if self.info else {}

    def ready_connection(self) -> Connection:
        """The live connection, or UpstreamUnavailable saying why there is none."""
        conn = self.connection
        if self._state == "ready" and conn is not None and conn.closed_reason is None:  # `lifecycle.is_ready`, inline
            return conn
        words = REFUSALS.get(self.state) or "is not connected"
        if lifecycle.needs_sign_in(self.state):
            raise upstream_fault(SignInNeeded, self.alias, self.reason or words)
        raise upstream_fault(UpstreamUnavailable, self.alias, words)

    def _set_state(self, state: UpstreamState, reason: str = "") -> None:
        changed = state != self._state
        self._state, self.reason = lifecycle.move(self.alias, self._state, state), reason
        if changed:
            self._on_change(self)

    async def run(self) -> None:
        """Supervise until cancelled: start, serve, and restart after each stop."""
        try:
            while True:
                await self._serve_once()
                delay = self.backoff.next_delay(asyncio.get_running_loop().time())  # the clock its sleeps use
                if delay >= self.backoff.pause:
                    self._set_state("paused", self.reason)
                    log.warning("upstream '%s' paused for %.0fs after repeated stops", self.alias, delay)
                await asyncio.sleep(delay)
        finally:
            await finish(self._stop_child())
            self._set_state("stopped")

    async def _serve_once(self) -> None:
        try:
            child = await self._open(self.config, self)
        except SidecarError as exc:
            self._fail(exc)
            return
        self._child = child
        conn = self._lines_to = Connection(self.alias, child, self._handler)
        if isinstance(child, LineChannel):  # a stdio child's lines go to `conn` with no `feed` here between
            child.lines_to(conn.feed)
        child.gone.add_done_callback(lambda _: conn.lost(child.ended()))
        try:
            await self._start(conn)
            self._refresh = Jobs()
            self.connection = conn
            self._was_ready = True
            self._set_state("ready")
            log.info("upstream '%s' ready: %d tools", self.alias, len(self.listing.tools))
            if self.info is not None and self.info.protocol_version == MODERN_VERSION:  # no session to hear changes on
                self._refresh.spawn(follow_changes(conn, self.info.capabilities, partial(self._reread, conn),
                                                   self.watched_uris))
            await child.gone
            self._fail(child.ended(), restarting=True)
        except TimeoutError:
            self._fail(UpstreamUnavailable(f"did not answer within {self.start_timeout:g}s"))
        except SidecarError as exc:
            self._fail(exc)
        finally:
            refresh, self._refresh = self._refresh, None
            if refresh is not None:
                await finish(refresh.aclose())
            await finish(self._stop_child())

    async def _start(self, conn: Connection) -> None:
        url = self.config.type != "stdio"
        budget = BIG_START_SECONDS if url and is_big(self.listing.tools) else self.start_timeout
        greeting = _greeting_of(conn)
        async with asyncio.timeout(max(budget, self.start_timeout)) as scope:
            if greeting is not None:  # an early process: its handshake and first page were read already
                self.listing = await self._greeted(conn, greeting)
            else:
                self.info = await handshake(conn, probe=self.config.type == "http")
                grow = self._grow_when_big(scope) if url else None
                self.listing = await read_listing(conn, self.info.capabilities, on_tools_page=grow)
        self._screen_param_headers(conn, self.listing.tools)
        await self._prepared(self.listing.tools)

    async def _greeted(self, conn: Connection, greeting: Greeting) -> Listing:
        """The start of an early process from what its greeting read: the lines that were
        not its answers first (as the connection would have had them), then the handshake
        and the listing, its first `tools/list` page taken from the greeting."""
        if greeting.timed_out or greeting.initialize is None:
            raise TimeoutError
        for line in greeting.replay:
            self.feed(line)
        self.info = greeted(greeting.initialize)
        # a server without tools may have refused the greeting's `tools/list`: not asked, not read
        wanted = greeting.tools is not None and "tools" in self.info.capabilities
        first = answer_of(greeting.tools) if greeting.tools is not None and wanted else None
        return await read_listing(conn, self.info.capabilities, first_tools=first)

    def _screen_param_headers(self, conn: Connection, tools: list[dict[str, Any]]) -> None:
        """Teach a URL channel its tools' `x-mcp-header` annotations, and say which tools
        are left out of the catalog for invalid ones (sidecar.catalog.merge leaves them out)."""
        channel = getattr(conn.transport, "param_headers", None)
        table = channel if isinstance(channel, ParamHeaders) else ParamHeaders()
        for name, why in table.learn(tools):
            log.warning("upstream '%s': tool '%s' is left out, its %s annotation is invalid: %s",
                        self.alias, name, ANNOTATION, why)

    async def _prepared(self, tools: list[dict[str, Any]]) -> None:
        """Let the listener get a new tool listing ready (the trust screen's digests and
        scan, in slices) before it is told of it. Only a warm-up: a fault here is logged and
        the listing goes on as it came (the screen then does that work itself)."""
        if self._prepare is None or not tools:
            return
        try:
            await self._prepare(self.alias, tools)
        except Exception as exc:  # noqa: BLE001 (the screen redoes whatever this missed)
            log.warning("upstream '%s': preparing its %d tools failed (%s)", self.alias, len(tools), type(exc).__name__)

    def _grow_when_big(self, scope: asyncio.Timeout) -> Callable[[list[dict[str, Any]]], None]:
        """A URL server found big while listing gets BIG_START_SECONDS from its start."""
        started = asyncio.get_running_loop().time()

        def grow(tools: list[dict[str, Any]]) -> None:
            if is_big(tools):
                scope.reschedule(max(scope.when() or 0.0, started + BIG_START_SECONDS))

        return grow

    # -- the Inbox its channel reports to: all to the connection of the current channel --

    def feed(self, line: bytes) -> None:
        if self._lines_to is not None:
            self._lines_to.feed(line)

    def frame(self, frame: UpstreamFrame, size: int) -> None:
        if self._lines_to is not None:
            self._lines_to.frame(frame, size)

    def dropped(self, notice: DroppedFrame) -> None:
        if self._lines_to is not None:
            self._lines_to.dropped(notice)

    def fault(self, ident: RequestId, fault: UpstreamUnavailable) -> None:
        if self._lines_to is not None:
            self._lines_to.fault(ident, fault)

    def _fail(self, error: SidecarError, restarting: bool = False) -> None:
        self.connection = None
        reason = error.detail if isinstance(error, UpstreamUnavailable) else error.message
        said = _unnamed(reason, self.alias)  # an error's words may name it already, even twice
        if not restarting:
            # only a child process has a stderr worth showing; a URL server's session is not news
            tail = self._child.diagnostics()[-800:] if self._child and self.config.type == "stdio" else ""
            log.warning("upstream '%s' %s%s", self.alias, said, f"; its stderr ends: {tail!r}" if tail.strip() else "")
        else:
            self.restarts += 1
            log.warning("upstream '%s' %s", self.alias, said)
        if isinstance(error, SignInNeeded):  # bots never sign in: out until a person does
            self._set_state("needs-sign-in", reason)
            return
        self._set_state("restarting" if restarting or self._was_ready else "failed", reason)

    async def _stop_child(self) -> None:
        child, self._child = self._child, None
        if child is not None:
            if self.connection is not None:
                self.connection.lost(UpstreamUnavailable("is shutting down"))
            await finish(child.stop())

    def notification(self, conn: Connection, frame: UpstreamFrame) -> bool:
        """Handle list changes here (re-read, then announce); False for the others."""
        kind = _LIST_NOTIFICATIONS.get(frame.method or "")
        if kind is None or self._refresh is None or conn is not self.connection:
            return False
        self._refresh.spawn(self._reread(conn, kind))
        return True

    async def _reread(self, conn: Connection, kind: str) -> None:
        try:
            async with asyncio.timeout(self.start_timeout):
                fresh = await read_listing(conn, self.capabilities, frozenset({kind}))
        except (TimeoutError, SidecarError) as exc:
            log.warning("upstream '%s': re-reading its %s failed: %s", self.alias, kind, exc)
            return
        if kind == "tools":
            self._screen_param_headers(conn, fresh.tools)
            await self._prepared(fresh.tools)
            self.listing = msgspec.structs.replace(self.listing, tools=fresh.tools)
        elif kind == "prompts":
            self.listing = msgspec.structs.replace(self.listing, prompts=fresh.prompts)
        else:
            self.listing = msgspec.structs.replace(self.listing, resources=fresh.resources, templates=fresh.templates)
        self._on_change(self)


def _greeting_of(conn: Connection) -> Greeting | None:
    """The greeting of an early stdio process, taken once (a restart greets its new process itself)."""
    greeting: Greeting | None = getattr(conn.transport, "greeting", None)
    if greeting is not None:
        conn.transport.greeting = None  # type: ignore[attr-defined]
    return greeting


def _unnamed(words: str, alias: str) -> str:
    """`words` without the leading "upstream 'alias'" an error may carry (once or more), so a
    log line that names the server itself names it once."""
    name = f"upstream '{alias}'"
    while words.startswith(name):
        words = words[len(name):].lstrip(": ")
    return words
