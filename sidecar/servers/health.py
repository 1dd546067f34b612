"""Server health: check results kept in `<data>/mcp-health.json`, when each server is due
for another check, and which servers a face leaves out (and says so once).

Owns the health file (locked, written atomically, 0600), the schedule (a failed server
is tried again every 30 minutes, one that started is checked again every 6 hours), the
mount plan a face asks for (`plan_mounts`: blanks still to fill, a duplicate of an
earlier entry, a failed last check), and the loop that runs due checks. A record counts
only while the entry keeps the same connection (its fingerprint: command, arguments,
address, and the names, never the values, of its env and headers).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import logging
import os
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from sidecar.catalog.pins import Pin, digest_of, pin_tools
from sidecar.config import ServerConfig, SidecarConfig
from sidecar.servers import rules

if TYPE_CHECKING:  # the check loads only when a check runs: a face's start-up needs none
    from sidecar.servers.check import CheckResult, Outcome
from sidecar.servers.store import write_private

__all__ = [
    "HEALTH_FILE",
    "RETRY_FAILED_SECONDS",
    "RECHECK_STARTED_SECONDS",
    "HealthFile",
    "HealthPins",
    "HealthRecord",
    "LeftOut",
    "MountPlan",
    "due",
    "fingerprint",
    "health_file_for",
    "keep_checking",
    "leave_out",
    "mountable",
    "plan_mounts",
    "recheck_due",
    "record_start",
]

log = logging.getLogger(__name__)

HEALTH_FILE = "mcp-health.json"
RETRY_FAILED_SECONDS = 30 * 60
RECHECK_STARTED_SECONDS = 6 * 60 * 60
_IDLE_SECONDS = 60.0  # the loop's longest sleep: it notices new records written by others


class HealthRecord(msgspec.Struct, rename="camel", kw_only=True):
    ok: bool
    checked_at: float
    outcome: str
    reason: str = ""
    tools: int = 0
    tool_names: list[str] = []
    fingerprint: str = ""
    announced: bool = False  # a face already said it leaves this server out
    pins: dict[str, Pin] | None = None  # tool name -> its approved definition (None: never pinned)


class LeftOut(msgspec.Struct, frozen=True):
    alias: str
    reason: str
    announce: bool  # say it now; False once it was said for this failure


class MountPlan(msgspec.Struct, frozen=True):
    mounted: tuple[ServerConfig, ...]
    left_out: tuple[LeftOut, ...]


_records = msgspec.json.Decoder(dict[str, HealthRecord])


def fingerprint(server: ServerConfig) -> str:
    shape = [server.type, server.command, server.args, server.cwd, server.url, sorted(server.env),
             sorted(h.lower() for h in server.headers)]
    return hashlib.sha256(msgspec.json.encode(shape)).hexdigest()[:32]


def due(record: HealthRecord | None, server: ServerConfig, now: float) -> bool:
    if record is None or record.fingerprint != fingerprint(server):
        return True
    wait = RECHECK_STARTED_SECONDS if record.ok else RETRY_FAILED_SECONDS
    return now - record.checked_at >= wait


def _next_due(record: HealthRecord | None, server: ServerConfig) -> float:
    if record is None or record.fingerprint != fingerprint(server):
        return 0.0
    return record.checked_at + (RECHECK_STARTED_SECONDS if record.ok else RETRY_FAILED_SECONDS)


class HealthFile:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def load(self) -> dict[str, HealthRecord]:
        try:
            return _records.decode(self.path.read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, msgspec.DecodeError) as exc:
            log.warning("server health file %s could not be read (%s); starting afresh", self.path, type(exc).__name__)
            return {}

    @contextlib.contextmanager
    def edit(self) -> Iterator[dict[str, HealthRecord]]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path.with_name(f".{self.path.name}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            records = self.load()
            yield records
            write_private(self.path, msgspec.json.format(msgspec.json.encode(records), indent=2) + b"\n")
        finally:
            os.close(fd)

    def record(self, server: ServerConfig, result: CheckResult, now: float | None = None) -> HealthRecord:
        with self.edit() as records:
            before = records.get(server.alias)
            same_failure = (before is not None and not before.ok and not result.ok
                            and before.fingerprint == fingerprint(server))
            record = HealthRecord(
                ok=result.ok, checked_at=time.time() if now is None else now, outcome=result.outcome,
                reason=result.reason, tools=result.tools, tool_names=result.tool_names,
                fingerprint=fingerprint(server), announced=same_failure and before is not None and before.announced,
                pins=_pins_after(before, result),
            )
            records[server.alias] = record
        return record

    def save_pins(self, server: ServerConfig, pins: dict[str, Pin]) -> None:
        """Keep `pins` as the server's approved definitions (a record is made if none exists:
        the face started it, which counts as a check)."""
        with self.edit() as records:
            before = records.get(server.alias)
            if before is None:
                before = HealthRecord(ok=True, checked_at=time.time(), outcome="connected", tools=len(pins),
                                      tool_names=list(pins), fingerprint=fingerprint(server))
            records[server.alias] = msgspec.structs.replace(before, pins=dict(pins))

    def forget(self, alias: str) -> None:
        with self.edit() as records:
            records.pop(alias, None)


def _pins_after(before: HealthRecord | None, result: CheckResult) -> dict[str, Pin] | None:
    """A passed check pins what it listed (a definition a person reviewed stays reviewed);
    anything else keeps the pins there were."""
    kept = before.pins if before is not None else None
    if result.ok and result.definitions:
        from sidecar.catalog.poison import scan_tools

        named = [t for t in result.definitions if isinstance(t.get("name"), str) and t.get("name")]
        found = dict(zip((digest_of(t) for t in named), scan_tools(named)))
        return pin_tools(named, before=kept, findings=found)
    return kept


class HealthPins:
    """The `PinStore` on the health file, for the servers of one config."""

    def __init__(self, health: HealthFile, servers: Iterable[ServerConfig]) -> None:
        self.health = health
        self.servers = {s.alias: s for s in servers}

    def version(self) -> int:
        """Changes whenever the health file is written (another process approved, say)."""
        try:
            return self.health.path.stat().st_mtime_ns
        except OSError:
            return 0

    def load_pins(self, alias: str) -> dict[str, Pin] | None:
        record = self.health.load().get(alias)
        return record.pins if record is not None else None

    def save_pins(self, alias: str, pins: Mapping[str, Pin]) -> None:
        server = self.servers.get(alias)
        if server is not None:
            with contextlib.suppress(OSError):
                self.health.save_pins(server, dict(pins))


def record_start(config: SidecarConfig, server: ServerConfig, *, ok: bool, reason: str = "",
                 tool_names: Sequence[str] = ()) -> None:
    """A face's own start of a server counts as a check (so it is not started twice to check)."""
    health = health_file_for(config)
    if health is None:
        return
    from sidecar.servers.check import CheckResult

    outcome: Outcome = "connected" if ok else "failed"
    result = CheckResult(name=server.alias, outcome=outcome, tools=len(tool_names), tool_names=list(tool_names),
                         reason=reason)
    with contextlib.suppress(OSError):
        health.record(server, result)


def health_file_for(config: SidecarConfig) -> HealthFile | None:
    """`data.folder`, else the config file's own folder; None for a config never read from disk."""
    if config.data.folder:
        return HealthFile(Path(config.data.folder).expanduser() / HEALTH_FILE)
    if config.source:
        return HealthFile(Path(config.source).resolve().parent / HEALTH_FILE)
    return None


# -- what a face mounts ---------------------------------------------------------------------


def plan_mounts(servers: Sequence[ServerConfig], records: dict[str, HealthRecord]) -> MountPlan:
    """Pure: every server that may start, and each one left out with its reason."""
    mounted: list[ServerConfig] = []
    left_out: list[LeftOut] = []
    first_of: dict[tuple[object, ...], str] = {}
    for server in servers:
        reason, announce = _why_left_out(server, records.get(server.alias), first_of)
        if reason is None:
            mounted.append(server)
        else:
            left_out.append(LeftOut(server.alias, reason, announce))
    return MountPlan(tuple(mounted), tuple(left_out))


def _why_left_out(
    server: ServerConfig, record: HealthRecord | None, first_of: dict[tuple[object, ...], str]
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
        return f"it failed its last check{why}; it is tried again every 30 minutes", not record.announced
    return None, False


def leave_out(config: SidecarConfig) -> MountPlan:
    """The face's question: which servers to start. Marks each failure as said, so the next
    face (or the next process) leaves it out quietly."""
    health = health_file_for(config)
    if health is None:
        return plan_mounts(config.servers, {})
    plan = plan_mounts(config.servers, health.load())
    fresh = {item.alias for item in plan.left_out if item.announce}
    if fresh:
        with contextlib.suppress(OSError), health.edit() as records:
            for alias in fresh:
                if alias in records and not records[alias].ok:
                    records[alias].announced = True
    return plan


# -- checks that come due -------------------------------------------------------------------

OnResult = Callable[[ServerConfig, "CheckResult"], Awaitable[None] | None]


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
        from sidecar.servers.check import check_server, tool_caps

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


def mountable(config: SidecarConfig) -> SidecarConfig:
    """The config less the servers this face leaves out (unfilled, duplicate, failed its
    last check), each said once."""
    plan = leave_out(config)
    for alias, reason in config.skipped:
        log.warning("upstream '%s' is missing from this face: %s", alias, reason)
    for left in plan.left_out:
        (log.warning if left.announce else log.info)("upstream '%s' is left out: %s", left.alias, left.reason)
    return msgspec.structs.replace(config, servers=plan.mounted)
