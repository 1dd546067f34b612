"""What the mount plan reads of the health file, before the rest of the sidecar loads.

Owns where the health file is (`health_path_for`: `data.folder`, else the config file's own
folder), each record's head (`HealthHead`: a record less its pins, which are most of a file
and are never built here), the connection's `fingerprint` and `read_heads`. The file itself
(records with their pins, written under a lock) is `sidecar.mounts.health`, which builds on
this: kept apart so the CLI chooses the servers it starts early without loading the pins'
module and the poisoning scan behind it.
"""

from __future__ import annotations

import logging
from pathlib import Path

import msgspec

from sidecar.config import ServerConfig, SidecarConfig

__all__ = ["HEALTH_FILE", "HealthHead", "fingerprint", "health_path_for", "read_heads", "unreadable"]

log = logging.getLogger("sidecar.mounts.health")  # the file's one voice, whichever part read it

HEALTH_FILE = "mcp-health.json"


class HealthHead(msgspec.Struct, rename="camel", kw_only=True):
    """A record less its pins: what the mount plan reads (a file's pins are most of it)."""

    ok: bool
    checked_at: float
    outcome: str
    reason: str = ""
    tools: int = 0
    tool_names: list[str] = []
    fingerprint: str = ""
    announced: bool = False  # a face already said it leaves this server out


_heads = msgspec.json.Decoder(dict[str, HealthHead])  # the pins skipped, never built


def fingerprint(server: ServerConfig) -> str:
    """The connection a record counts for: command, arguments, address, and the names
    (never the values) of its env and headers."""
    import hashlib  # here: the plan reads a fingerprint only for a failed record

    shape = [server.type, server.command, server.args, server.cwd, server.url, sorted(server.env),
             sorted(h.lower() for h in server.headers)]
    return hashlib.sha256(msgspec.json.encode(shape)).hexdigest()[:32]


def health_path_for(config: SidecarConfig) -> Path | None:
    """`data.folder`, else the config file's own folder; None for a config never read from disk."""
    if config.data.folder:
        return Path(config.data.folder).expanduser() / HEALTH_FILE
    if config.source:
        return Path(config.source).resolve().parent / HEALTH_FILE
    return None


def read_heads(path: Path) -> dict[str, HealthHead]:
    """Every record of the file at `path` without its pins ({} when there is none, or it
    cannot be read: then said once, and the file starts afresh)."""
    try:
        return _heads.decode(path.read_bytes())
    except FileNotFoundError:
        return {}
    except (OSError, msgspec.DecodeError) as exc:
        unreadable(path, exc)
        return {}


def unreadable(path: Path, exc: Exception) -> None:
    log.warning("server health file %s could not be read (%s); starting afresh", path, type(exc).__name__)
