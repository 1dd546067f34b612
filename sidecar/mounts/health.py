"""Server health on disk: each server's last check, kept in `<data>/mcp-health.json`.

Owns the health file (locked, written atomically, 0600), its records (`HealthRecord`: the
outcome, the tools listed, the connection's fingerprint, whether a face already said it
leaves the server out, the approved tool definitions) and the `CheckResult` a record is
made from. A record counts only while the entry keeps the same connection (its
fingerprint: command, arguments, address, and the names, never the values, of its env
and headers). A face's own start counts as a check (`record_start`); the file is also
the gate's `PinStore` (`HealthPins`). Pins change only by a person's act (an `Approval`,
made by `servers approve`, `check` and the console's Approve); a face may only pin what it sees first, where no
pins exist, and a folder where they cannot be kept makes it fail closed (`PinsNotKept`).
When checks come due is the admin's business (`sidecar_admin.health`); which servers a
face leaves out is `sidecar.mounts.plan`, from the records' heads (`sidecar.mounts.heads`).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import msgspec

from sidecar.trust.pins import Approval, Pin, PinsNotKept, digest_of, pin_tools
from sidecar.trust.findings import Finding
from sidecar.config import ServerConfig, SidecarConfig
from sidecar.listing_snapshot import invalidate
from sidecar.mounts.heads import HEALTH_FILE, HealthHead, fingerprint, health_path_for, read_heads, unreadable
from sidecar.private_files import lock_beside, write_private

if TYPE_CHECKING:  # the catalog is the face's: typing only
    from sidecar.catalog.live import LiveCatalog

__all__ = [
    "HEALTH_FILE",
    "CheckResult",
    "HealthFile",
    "HealthHead",
    "HealthPins",
    "HealthRecord",
    "Outcome",
    "fingerprint",
    "health_file_for",
    "record_start",
]

log = logging.getLogger(__name__)

_T = TypeVar("_T")
Outcome = Literal["connected", "refused", "unreachable", "timed-out", "failed", "needs-values", "not-allowed"]


class CheckResult(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """What one check found; `headline` is the sentence a person reads."""

    name: str
    outcome: Outcome
    tools: int = 0
    tool_names: list[str] = []
    reason: str = ""
    warnings: list[str] = []
    sign_in: bool = False
    cut_tools: list[str] = []  # tools over the per-tool size caps (cut in every listing)
    definitions: list[dict[str, Any]] = []  # the tools as listed, for pinning (never printed)
    stderr_tail: list[str] = []  # a command's last stderr lines, redacted (a person's check only; never kept)

    @property
    def ok(self) -> bool:
        return self.outcome == "connected"

    @property
    def headline(self) -> str:
        if self.ok:
            return f"Connected: {self.tools} tool{'' if self.tools == 1 else 's'}"
        if self.sign_in:
            return f"Needs sign-in: {self.reason}"
        return f"Not connected: {self.reason}"


class HealthRecord(HealthHead, kw_only=True):
    pins: dict[str, Pin] | None = None  # tool name -> its approved definition (None: never pinned)


class _JudgedPin(msgspec.Struct, frozen=True, kw_only=True):
    """A pin as a face judges by it: the `definition` (canonical JSON, read by `servers
    review` only) is skipped while decoding, never built: about 2.8 KB a tool kept idle."""

    digest: str
    body: str
    reviewed: bool = False
    findings: tuple[Finding, ...] | None = None
    scanned_by: str = ""
    listed: str = ""


class _JudgedPins(msgspec.Struct):
    pins: dict[str, _JudgedPin] | None = None


_records = msgspec.json.Decoder(dict[str, HealthRecord])
_judged = msgspec.json.Decoder(_JudgedPins)
_raw_records = msgspec.json.Decoder(dict[str, msgspec.Raw])
_record = msgspec.json.Decoder(HealthRecord)


def judged_pins(raw: msgspec.Raw | None) -> dict[str, Pin] | None:
    """A record's pins as a face judges by them (`HealthFile.load_judged_pins`)."""
    found = _judged.decode(raw).pins if raw is not None else None
    if found is None:
        return None
    return {name: Pin(digest=p.digest, body=p.body, definition="", reviewed=p.reviewed, findings=p.findings,
                      scanned_by=p.scanned_by, listed=p.listed) for name, p in found.items()}


class HealthFile:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def load(self) -> dict[str, HealthRecord]:
        return self._decoded(_records.decode, {})

    def load_heads(self) -> dict[str, HealthHead]:
        """Every record without its pins (cheaper by far: a file's pins are most of it)."""
        return read_heads(self.path)

    def load_one(self, alias: str) -> HealthRecord | None:
        """One server's record; the others' are skipped, their pins never built (a face
        reading its pins kept every server's in memory before: several MB)."""
        def one(data: bytes) -> HealthRecord | None:
            raw = _raw_records.decode(data).get(alias)
            return _record.decode(raw) if raw is not None else None

        return self._decoded(one, None)

    def load_judged_pins(self, alias: str) -> dict[str, Pin] | None:
        """One server's pins as a face judges by them: each without its `definition` (""),
        which a face never reads; the file keeps it, and a face never writes pins it read."""
        return judged_pins(self.raw_records().get(alias))

    def raw_records(self) -> dict[str, msgspec.Raw]:
        """Every record, each left as its bytes ({} when there is no file, or it cannot be read)."""
        return self._decoded(_raw_records.decode, {})

    def _decoded(self, decode: Callable[[bytes], _T], empty: _T) -> _T:
        try:
            return decode(self.path.read_bytes())
        except FileNotFoundError:
            return empty
        except (OSError, msgspec.DecodeError) as exc:
            unreadable(self.path, exc)
            return empty

    @contextlib.contextmanager
    def edit(self) -> Iterator[dict[str, HealthRecord]]:
        """The records to change, written back whole under the file's lock: the one door of
        every write of pins. A write that replaces or forgets pins a server had invalidates
        the listing snapshot beside the file first (`sidecar.listing_snapshot.invalidate`);
        a face's first sight, where no pins were, leaves it (the listing it answers for
        shows what the first sight pinned)."""
        with lock_beside(self.path):
            records = self.load()
            had = {alias: dict(record.pins) for alias, record in records.items() if record.pins is not None}
            yield records
            if any(records.get(alias) is None or records[alias].pins != pins for alias, pins in had.items()):
                invalidate(str(self.path.parent))
            raw = msgspec.json.encode(records)  # indented for a person only while small: a big one is a loop stall
            write_private(self.path, (msgspec.json.format(raw, indent=2) if len(raw) < 256 << 10 else raw) + b"\n")

    def record(self, server: ServerConfig, result: CheckResult, now: float | None = None,
               approval: Approval | None = None) -> HealthRecord:
        """Keep one check's outcome. The pins stay as they were unless a person ran the
        check (`approval`): then what it listed is approved (RELIABILITY.md rule 16)."""
        with self.edit() as records:
            before = records.get(server.alias)
            same_failure = (before is not None and not before.ok and not result.ok
                            and before.fingerprint == fingerprint(server))
            record = HealthRecord(
                ok=result.ok, checked_at=time.time() if now is None else now, outcome=result.outcome,
                reason=result.reason, tools=result.tools, tool_names=result.tool_names,
                fingerprint=fingerprint(server), announced=same_failure and before is not None and before.announced,
                pins=_pins_after(before, result, approval),
            )
            records[server.alias] = record
        return record

    def save_pins(self, server: ServerConfig, pins: dict[str, Pin], approval: Approval) -> None:
        """Keep `pins` as the server's approved definitions, by a person's act (a record is
        made if none exists)."""
        if approval.alias != server.alias:
            raise ValueError(f"an approval of '{approval.alias}' cannot change the pins of '{server.alias}'")
        with self.edit() as records:
            records[server.alias] = msgspec.structs.replace(_record_of(records, server, pins), pins=dict(pins))

    def pin_first_sight(self, server: ServerConfig, pins: dict[str, Pin]) -> dict[str, Pin]:
        """Keep `pins` only if the server has none yet (a face's first sight: never over
        pins a person or another process kept); the pins kept now. Raises `PinsNotKept`."""
        try:
            with self.edit() as records:
                before = records.get(server.alias)
                if before is not None and before.pins is not None:
                    return dict(before.pins)
                records[server.alias] = msgspec.structs.replace(_record_of(records, server, pins), pins=dict(pins))
        except OSError as exc:
            raise PinsNotKept(str(self.path.parent), exc.strerror or type(exc).__name__) from None
        return dict(pins)

    def forget(self, alias: str) -> None:
        with self.edit() as records:
            records.pop(alias, None)


def _record_of(records: dict[str, HealthRecord], server: ServerConfig, pins: Mapping[str, Pin]) -> HealthRecord:
    """The server's record, or a new one (the face started it, which counts as a check)."""
    before = records.get(server.alias)
    if before is not None:
        return before
    return HealthRecord(ok=True, checked_at=time.time(), outcome="connected", tools=len(pins),
                        tool_names=list(pins), fingerprint=fingerprint(server))


def _pins_after(before: HealthRecord | None, result: CheckResult, approval: Approval | None) -> dict[str, Pin] | None:
    """A passed check a person ran pins what it listed (a definition a person reviewed
    stays reviewed); anything else keeps the pins there were."""
    kept = before.pins if before is not None else None
    if approval is not None and result.ok and result.definitions:
        from sidecar.trust.scan import scan_tools

        named = [t for t in result.definitions if isinstance(t.get("name"), str) and t.get("name")]
        found = dict(zip((digest_of(t) for t in named), scan_tools(named)))
        return pin_tools(named, before=kept, findings=found)
    return kept


class HealthPins:
    """The `PinStore` on the health file, for the servers a face mounts now (read from
    its snapshot of facts, so a server mounted late is pinned like one at start)."""

    def __init__(self, health: HealthFile, live: LiveCatalog) -> None:
        self.health = health
        self._live = live

    def version(self) -> int:
        """Changes whenever the health file is written (another process approved, say); 0
        while there is no health file."""
        try:
            return self.health.path.stat().st_mtime_ns
        except OSError:
            return 0

    def load_pins(self, alias: str) -> dict[str, Pin] | None:
        return self.health.load_judged_pins(alias)

    def each_pins(self, aliases: Sequence[str]) -> Iterator[tuple[str, dict[str, Pin] | None]]:
        """`load_pins` of each of `aliases` in turn, from one read of the file (the file of
        3 x 425 pinned tools is 4 MB); its bytes go when the iteration ends."""
        records = self.health.raw_records()
        for alias in aliases:
            yield alias, judged_pins(records.get(alias))

    def load_reviewable(self, alias: str) -> dict[str, Pin] | None:
        """The pins with their definitions, for a person's review (`Trust.pins_for_review`)."""
        record = self.health.load_one(alias)
        return record.pins if record is not None else None

    def pin_first_sight(self, alias: str, pins: Mapping[str, Pin]) -> dict[str, Pin]:
        server = self._live.facts.servers.get(alias)
        if server is None:
            raise PinsNotKept(str(self.health.path.parent), f"'{alias}' is not mounted")
        return self.health.pin_first_sight(server, dict(pins))


def record_start(config: SidecarConfig, server: ServerConfig, *, ok: bool, reason: str = "",
                 tool_names: Sequence[str] = ()) -> None:
    """A face's own start of a server counts as a check (so it is not started twice to check)."""
    health = health_file_for(config)
    if health is None:
        return
    outcome: Outcome = "connected" if ok else "failed"
    result = CheckResult(name=server.alias, outcome=outcome, tools=len(tool_names), tool_names=list(tool_names),
                         reason=reason)
    with contextlib.suppress(OSError):
        health.record(server, result)


def health_file_for(config: SidecarConfig) -> HealthFile | None:
    """The health file of `config` (`health_path_for`); None for a config never read from disk."""
    path = health_path_for(config)
    return HealthFile(path) if path is not None else None
