"""What the console shows, read from the running faces, the config file and the health file.

Owns: each server's row (its state in words: on, off, starting, restarting, needs
sign-in, left out and why; its tool count; its last check and the next; which bots reach
it), and the ring of the last calls, fed by an observer on each face's gate. A call is
kept as tool, bot, outcome, duration, sizes and whether its result was held: never its
arguments or its result.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sidecar.config import SidecarConfig, parse_config, rules
from sidecar.gate.call import ToolCall
from sidecar.hub.face import Face
from sidecar.mounts.health import HealthRecord
from sidecar.upstream import Upstream

__all__ = ["CallRing", "CallLine", "ServerRow", "server_rows"]

RING_SIZE = 200
_UPSTREAM_WORDS = {"ready": "on", "starting": "starting", "restarting": "restarting", "needs-sign-in": "needs sign-in",
                   "stopped": "stopped"}


@dataclass(frozen=True)
class CallLine:
    at: float
    bot: str
    tool: str
    outcome: str
    ms: float
    bytes_in: int
    bytes_out: int
    held: bool


class CallRing:
    """The last calls of every face, newest first; `watch` adds the observers."""

    def __init__(self, size: int = RING_SIZE) -> None:
        self.lines: deque[CallLine] = deque(maxlen=size)
        self.count = 0

    def watch(self, faces: Mapping[str, Face]) -> None:
        for bot, face in faces.items():
            face.gate.observe(self._observer(bot))

    def _observer(self, bot: str) -> Any:
        def seen(call: ToolCall) -> None:
            self.count += 1
            self.lines.appendleft(CallLine(time.time(), bot, call.ran, call.outcome or "unfinished",
                                           round(call.seconds * 1000, 1), call.bytes_in, call.bytes_out,
                                           call.handle is not None))
        return seen


@dataclass(frozen=True)
class ServerRow:
    name: str
    state: str  # in words
    reason: str
    tools: int | None
    last_check: float | None
    next_check: float | None
    bots: tuple[str, ...]
    url: bool  # a URL server (it may sign in)
    needs: bool  # blanks left to fill


def server_rows(entries: Mapping[str, Any], document: dict[str, Any], faces: Mapping[str, Face],
                records: Mapping[str, HealthRecord], config: SidecarConfig) -> list[ServerRow]:
    """Every configured entry, in the order of the file."""
    skipped = dict(_parsed(document).skipped)
    rows = []
    for name, entry in entries.items():
        entry = entry if isinstance(entry, dict) else {}
        running = [f.pool.upstreams[name] for f in faces.values() if name in f.pool.upstreams]
        record = records.get(name)
        state, reason = _state(name, entry, skipped, running, record)
        ready = bool(running) and running[0].state == "ready"
        tools = len(running[0].listing.tools) if ready else (record.tools if record is not None and record.ok else None)
        rows.append(ServerRow(name, state, reason, tools, record.checked_at if record else None,
                              _next_check(record, ready, config), _bots(name, faces),
                              isinstance(entry.get("url"), str), bool(_blanks(entry))))
    return rows


def _blanks(entry: dict[str, Any]) -> list[str]:
    values = [*(entry.get("env") or {}).values(), *(entry.get("headers") or {}).values()] \
        if isinstance(entry.get("env") or {}, dict) and isinstance(entry.get("headers") or {}, dict) else []
    return [v for v in values if v == ""] + [a for a in entry.get("args") or [] if a == rules.NEEDS_VALUE]


_last_parse: dict[str, SidecarConfig] = {}  # the file's text -> its parse (parsing costs ~0.7 ms a server)


def _parsed(document: dict[str, Any]) -> SidecarConfig:
    key = json.dumps(document, sort_keys=True)
    if key not in _last_parse:
        try:
            config = parse_config(document, {})
        except Exception:  # a broken file still lists its entries by name
            config = SidecarConfig()
        _last_parse.clear()  # only the newest file is worth keeping
        _last_parse[key] = config
    return _last_parse[key]


def _state(name: str, entry: dict[str, Any], skipped: Mapping[str, str], running: list[Upstream],
           record: HealthRecord | None) -> tuple[str, str]:
    if entry.get("enabled") is False:
        return "off", ""
    if name in skipped:
        return "left out", skipped[name]
    failed = record is not None and not record.ok
    sign_in = failed and record is not None and ("sign-in" in record.reason or "omb-sidecar signin" in record.reason)
    if running:
        upstream = running[0]
        words = _UPSTREAM_WORDS.get(upstream.state, "left out")
        if words == "left out" and sign_in and record is not None:  # the last check knows why better
            return "needs sign-in", record.reason
        return words, "" if words == "on" else (upstream.reason or "")
    if failed and record is not None:
        return ("needs sign-in" if sign_in else "left out"), record.reason
    return "on", "not started by this process yet (a Test starts it)"


def _next_check(record: HealthRecord | None, ready: bool, config: SidecarConfig) -> float | None:
    if record is None or not config.health.schedule:
        return None
    wait = config.health.recheck_started_seconds if ready else config.health.retry_failed_seconds
    return record.checked_at + wait


def _bots(name: str, faces: Mapping[str, Face]) -> tuple[str, ...]:
    return tuple(bot for bot, face in faces.items() if any(s.alias == name for s in face.config.servers))
