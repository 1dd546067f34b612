"""When each server is due for another check, and the checks that come due.

Owns the schedule the `servers health` command and a long-running checker follow: a
failed server is tried again every 30 minutes, one that started is checked again every
6 hours; only servers that have a record are checked (a face records its own starts).
The records themselves are `sidecar.mounts.health`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable

from sidecar.config import ServerConfig, SidecarConfig
from sidecar.mounts.health import CheckResult, HealthRecord, fingerprint, health_file_for
from sidecar_admin.check import check_server, tool_caps

__all__ = ["RECHECK_STARTED_SECONDS", "RETRY_FAILED_SECONDS", "due", "keep_checking", "recheck_due"]

RETRY_FAILED_SECONDS = 30 * 60
RECHECK_STARTED_SECONDS = 6 * 60 * 60
_IDLE_SECONDS = 60.0  # the loop's longest sleep: it notices new records written by others


def due(record: HealthRecord | None, server: ServerConfig, now: float) -> bool:
    if record is None or record.fingerprint != fingerprint(server):
        return True
    wait = RECHECK_STARTED_SECONDS if record.ok else RETRY_FAILED_SECONDS
    return now - record.checked_at >= wait


def _next_due(record: HealthRecord | None, server: ServerConfig) -> float:
    if record is None or record.fingerprint != fingerprint(server):
        return 0.0
    return record.checked_at + (RECHECK_STARTED_SECONDS if record.ok else RETRY_FAILED_SECONDS)


# -- checks that come due -------------------------------------------------------------------

OnResult = Callable[[ServerConfig, CheckResult], Awaitable[None] | None]


async def recheck_due(
    config: SidecarConfig,
    *,
    now: float | None = None,
    skip: Callable[[str], bool] = lambda alias: False,
    on_result: OnResult | None = None,
) -> list[CheckResult]:
    """Check, one at a time, every server whose record is due; record each result."""
    health = health_file_for(config)
    if health is None:
        return []
    moment = time.time() if now is None else now
    records = health.load()
    results = []
    for server in _due_servers(config.servers, records, moment, skip):
        others = {a: r.tool_names for a, r in records.items() if r.ok}
        result = await check_server(server, tool_cap=config.budgets.tool_cap, others=others, caps=tool_caps(config))
        health.record(server, result, moment)
        results.append(result)
        if on_result is not None:
            outcome = on_result(server, result)
            if outcome is not None:
                await outcome
    return results


def _due_servers(
    servers: Iterable[ServerConfig], records: dict[str, HealthRecord], now: float, skip: Callable[[str], bool]
) -> list[ServerConfig]:
    return [s for s in servers if not skip(s.alias) and s.alias in records and due(records[s.alias], s, now)]


async def keep_checking(
    config: SidecarConfig,
    *,
    skip: Callable[[str], bool] = lambda alias: False,
    on_result: OnResult | None = None,
    clock: Callable[[], float] = time.time,
) -> None:
    """Run due checks until cancelled: failed servers every 30 minutes, started ones every
    6 hours. Only servers that have a record are checked here (a face records its starts)."""
    health = health_file_for(config)
    if health is None:
        return
    while True:
        await recheck_due(config, now=clock(), skip=skip, on_result=on_result)
        records = health.load()
        upcoming = [_next_due(records.get(s.alias), s) for s in config.servers if s.alias in records]
        wait = min([max(0.0, t - clock()) for t in upcoming] + [_IDLE_SECONDS])
        await asyncio.sleep(max(wait, 1.0))
