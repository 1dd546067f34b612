"""Which servers a face mounts, and each one it leaves out with its reason, said once.

Owns the mount plan (`plan_mounts`, pure: blanks still to fill, a duplicate of an earlier
entry, a failed last check), the face's question (`leave_out`, which marks each failure
as said in the health file, so the next face or process leaves it out quietly) and
`mountable`, the config a face is built from. Refuses nothing: a left-out server is
logged, never an error.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping, Sequence

import msgspec

from sidecar.config import Health, ServerConfig, SidecarConfig, rules
from sidecar.mounts.heads import HealthHead, fingerprint, health_path_for, read_heads

__all__ = ["LeftOut", "MountPlan", "leave_out", "mountable", "period_words", "plan_mounts", "retry_words"]

log = logging.getLogger(__name__)


class LeftOut(msgspec.Struct, frozen=True):
    alias: str
    reason: str
    announce: bool  # say it now; False once it was said for this failure


class MountPlan(msgspec.Struct, frozen=True):
    mounted: tuple[ServerConfig, ...]
    left_out: tuple[LeftOut, ...]


def period_words(seconds: float) -> str:
    """`1800` -> "30 minutes", `45` -> "45 seconds": a period as a person reads it."""
    for size, unit in ((3600.0, "hour"), (60.0, "minute")):
        if seconds >= size and seconds % size == 0:
            count = int(seconds // size)
            return f"{count} {unit}{'' if count == 1 else 's'}"
    return f"{seconds:g} second{'' if seconds == 1 else 's'}"


def retry_words(health: Health | None) -> str:
    """What brings back a server that failed its last check: with a health schedule
    (`health`, the long-lived HTTP front's), a check at start and then every
    `health.retryFailedSeconds`; always, `omb-sidecar check NAME`."""
    if health is None or not health.schedule:
        return "`omb-sidecar check {alias}` brings it back once fixed"
    every = period_words(health.retry_failed_seconds)
    return (f"it is tried again in the background now and every {every} (health.retryFailedSeconds); "
            "`omb-sidecar check {alias}` brings it back at once")


def plan_mounts(servers: Sequence[ServerConfig], records: Mapping[str, HealthHead],
                health: Health | None = None) -> MountPlan:
    """Pure: every server that may start, and each one left out with its reason (`health`:
    the schedule that will try a failed one again, None when nothing will)."""
    mounted: list[ServerConfig] = []
    left_out: list[LeftOut] = []
    first_of: dict[tuple[object, ...], str] = {}
    retry = retry_words(health)
    for server in servers:
        reason, announce = _why_left_out(server, records.get(server.alias), first_of, retry)
        if reason is None:
            mounted.append(server)
        else:
            left_out.append(LeftOut(server.alias, reason, announce))
    return MountPlan(tuple(mounted), tuple(left_out))


def _why_left_out(
    server: ServerConfig, record: HealthHead | None, first_of: dict[tuple[object, ...], str], retry: str
) -> tuple[str | None, bool]:
    needs = rules.missing_values(server.command, server.args, server.env, server.headers)
    if needs:
        return "it still needs a value for " + ", ".join(needs), True
    key = rules.mount_key(server.command, server.args, server.env, server.cwd, server.url, server.headers)
    if key in first_of:
        same = "address and headers" if server.url is not None else "command, arguments and environment"
        return f"it is the same server as '{first_of[key]}' (same {same}), mounted once", True
    first_of[key] = server.alias
    if record is not None and not record.ok and record.fingerprint == fingerprint(server):
        why = f": {record.reason}" if record.reason else ""
        return f"it failed its last check{why}; {retry.format(alias=server.alias)}", not record.announced
    return None, False


def leave_out(config: SidecarConfig, scheduled: bool = False) -> MountPlan:
    """The face's question: which servers to start. Marks each failure as said, so the next
    face (or the next process) leaves it out quietly. `scheduled`: a health schedule runs
    beside this face (it tries a failed server again)."""
    path = health_path_for(config)
    schedule = config.health if scheduled else None
    if path is None:
        return plan_mounts(config.servers, {}, schedule)
    plan = plan_mounts(config.servers, read_heads(path), schedule)
    fresh = {item.alias for item in plan.left_out if item.announce}
    if fresh:
        from sidecar.mounts.health import HealthFile  # the whole file (pins and all): only to mark a failure said

        with contextlib.suppress(OSError), HealthFile(path).edit() as records:
            for alias in fresh:
                if alias in records and not records[alias].ok:
                    records[alias].announced = True
    return plan


def mountable(config: SidecarConfig, scheduled: bool = False) -> SidecarConfig:
    """The config less the servers this face leaves out (unfilled, duplicate, failed its
    last check), each said once; `scheduled` as for `leave_out`."""
    plan = leave_out(config, scheduled)
    for alias, reason in config.skipped:
        log.warning("upstream '%s' is missing from this face: %s", alias, reason)
    for left in plan.left_out:
        (log.warning if left.announce else log.info)("upstream '%s' is left out: %s", left.alias, left.reason)
    return msgspec.structs.replace(config, servers=plan.mounted)
