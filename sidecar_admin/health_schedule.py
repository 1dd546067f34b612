"""The health schedule, run beside a long-lived front (the HTTP one) when `health.schedule`
is set: the CLI hands `HealthSchedule` to `sidecar.app.run_http` as its `watch_health`.

Owns, for each configured server of one face, when it is next looked at and what
happens then. A server that failed is tried again on its own at start (a restart
often comes with the fix; the check runs in this task, never before `initialize`) and
then every `health.retryFailedSeconds` (30 minutes by default), with the same isolated
check as `omb-sidecar check` (a second copy, never the face's); when it connects it
joins the face, and the face announces its tools with `list_changed`. A server that started is
checked again every `health.recheckStartedSeconds` (6 hours) over its live connection
(`ping`: no second copy is started). A mounted server whose circuit opens (it failed
to start or crashed five times in a minute: one slow start is the supervisor's to retry),
or whose re-check fails, leaves the face at once: its supervisor is stopped, its
tools go with `list_changed`, and it joins the retry round. Nothing here touches
another server. Results are kept in the health file when the face has one; none of them
approves anything: a passing check leaves the pins as a person left them.

Servers left out for reasons a check cannot change (blanks to fill, a duplicate) are not
scheduled. Refuses nothing on its own: it only watches and decides when.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from sidecar.config import ServerConfig, SidecarConfig
from sidecar.errors import SidecarError
from sidecar.hub.face import Face
from sidecar.mounts.health import CheckResult, HealthFile, health_file_for
from sidecar.upstream import Upstream, lifecycle
from sidecar.upstream.lifecycle import UpstreamState
from sidecar_admin.check import check_server

__all__ = ["HealthSchedule"]

log = logging.getLogger(__name__)

IDLE_SECONDS = 60.0  # the longest sleep between looks
# A start that fails once is the supervisor's to retry (with backoff); a server whose
# circuit opened after repeated failures is the schedule's.
_FAILING: frozenset[UpstreamState] = frozenset({"paused"})


class HealthSchedule:
    def __init__(self, face: Face, config: SidecarConfig, clock: Callable[[], float] = time.time) -> None:
        """`config` is the whole config, before the face left any server out."""
        self.face = face
        self.clock = clock
        self.retry = config.health.retry_failed_seconds
        self.recheck = config.health.recheck_started_seconds
        self.tool_cap = config.budgets.tool_cap
        self.health: HealthFile | None = health_file_for(config)
        self.servers = {s.alias: s for s in config.servers}
        self.next: dict[str, float] = {}
        self._leaving: dict[str, str] = {}  # alias -> why, noticed by the watcher
        self._wake = asyncio.Event()
        self._plan(config)
        face.watchers.append(self._noticed)

    def _plan(self, config: SidecarConfig) -> None:
        now = self.clock()
        records = self.health.load() if self.health else {}
        for alias in self.servers:
            if alias in self.face.pool.upstreams:
                self.next[alias] = now + self.recheck
            elif (record := records.get(alias)) is not None and not record.ok:
                # tried again at start (a restart may be the fix), off the face's own start:
                # this runs in its own task, one bounded check at a time
                self.next[alias] = now

    def _noticed(self, upstream: Upstream) -> None:
        if upstream.state in _FAILING and upstream.alias in self.servers:
            self._leaving.setdefault(upstream.alias, upstream.reason or upstream.state)
            self._wake.set()

    async def run(self) -> None:
        """Until cancelled: let failing servers leave, run the checks that come due."""
        while True:
            while self._leaving:
                alias, reason = self._leaving.popitem()
                await self._leave(alias, reason)
            for alias in [a for a, when in self.next.items() if when <= self.clock()]:
                await self._check(alias)
            await self._sleep()

    async def _sleep(self) -> None:
        soonest = min(self.next.values(), default=self.clock() + IDLE_SECONDS)
        wait = min(IDLE_SECONDS, max(0.0, soonest - self.clock()))
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(wait):
                await self._wake.wait()
        self._wake.clear()

    async def _check(self, alias: str) -> None:
        server = self.servers[alias]
        if alias in self.face.pool.upstreams:
            upstream = self.face.pool.upstreams[alias]
            if not lifecycle.is_ready(upstream.state):  # starting or restarting: the supervisor's business for now
                self.next[alias] = self.clock() + self.recheck
                return
            reason = await self._ping(upstream)
            if reason is None:
                self._record(server, True, "")
                self.next[alias] = self.clock() + self.recheck
            else:
                await self._leave(alias, reason)
            return
        result = await check_server(server, tool_cap=self.tool_cap)
        self._store(server, result)
        if result.ok:
            log.warning("upstream '%s' passed its check: it joins the face again", alias)
            self.face.mount(server)
            self.next[alias] = self.clock() + self.recheck
        else:
            self.next[alias] = self.clock() + self.retry

    async def _ping(self, upstream: Upstream) -> str | None:
        """None when the live connection answers `ping` in time; else why not."""
        try:
            conn = upstream.ready_connection()
            await conn.request("ping", {}, deadline=upstream.start_timeout)
        except SidecarError as exc:
            return exc.message
        return None

    async def _leave(self, alias: str, reason: str) -> None:
        if alias not in self.face.pool.upstreams:
            return
        log.warning("upstream '%s' leaves the face: %s; it is tried again every %gs", alias, reason, self.retry)
        await self.face.unmount(alias)
        self._leaving.pop(alias, None)  # its own stop is no news
        self._record(self.servers[alias], False, reason)
        self.next[alias] = self.clock() + self.retry

    def _record(self, server: ServerConfig, ok: bool, reason: str) -> None:
        upstream = self.face.pool.upstreams.get(server.alias)
        names = [str(t.get("name")) for t in upstream.listing.tools] if upstream and ok else []
        self._store(server, CheckResult(name=server.alias, outcome="connected" if ok else "failed",
                                        tools=len(names), tool_names=names, reason=reason))

    def _store(self, server: ServerConfig, result: CheckResult) -> None:
        if self.health is not None:
            with contextlib.suppress(OSError):
                self.health.record(server, result, self.clock())
