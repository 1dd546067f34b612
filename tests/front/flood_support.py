"""Helpers for the flood tests: an engine that stops reading, RSS sampled from /proc, and
the flood shapes (issue 12, class 3).

`FloodShape` says what the upstream's `spew` tool sends: a method, a count, the size of
each frame and a rate. `RssSampler` reads a process's resident set from /proc on a
short period while a flood runs, keeping the peak (a measurement, not a synchronisation:
the test waits for the upstream's own `spewed` event).
"""

from __future__ import annotations

import os
import select
import subprocess
import threading
from dataclasses import dataclass
from typing import Any
from tests.conftest import memory_kib

MB = 1 << 20
BUDGET = 64 * MB  # issue 12: under a flood, RSS within baseline + 64 MB


@dataclass(frozen=True)
class FloodShape:
    method: str
    count: int
    frame_bytes: int
    per_second: float = 0.0

    @property
    def total(self) -> int:
        return self.count * self.frame_bytes

    def arguments(self, nonce: str) -> dict[str, Any]:
        return {"method": self.method, "count": self.count, "bytes": self.frame_bytes,
                "per_second": self.per_second, "nonce": nonce}

    def __str__(self) -> str:
        rate = f"@{self.per_second:g}/s" if self.per_second else ""
        return f"{self.method.rsplit('/', 1)[-1]}x{self.count}x{self.frame_bytes}B{rate}"


def rss(pid: int) -> int:
    """Resident set size of `pid` in bytes."""
    return memory_kib(pid, "VmRSS") * 1024


class RssSampler:
    """Samples a process's RSS every `period` seconds on a thread; `peak` is the highest."""

    def __init__(self, pid: int, period: float = 0.02) -> None:
        self.pid = pid
        self.period = period
        self.peak = rss(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            try:
                self.peak = max(self.peak, rss(self.pid))
            except (OSError, AssertionError):
                return

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        try:
            self.peak = max(self.peak, rss(self.pid))
        except (OSError, AssertionError):
            pass


class LineReader:
    """Reads newline-delimited frames from a pipe only when asked to, each read bounded."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()

    def lines(self, timeout: float) -> list[bytes]:
        """Whatever complete lines arrive within `timeout` of the first byte ready."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return []
        chunk = os.read(self.fd, 1 << 20)
        if not chunk:
            raise EOFError("the sidecar closed stdout")
        self.buffer += chunk
        *done, rest = bytes(self.buffer).split(b"\n")
        self.buffer = bytearray(rest)
        return [line for line in done if line.strip()]


def stop(process: subprocess.Popen[bytes]) -> None:
    """Close stdin, then SIGTERM, then SIGKILL: nothing outlives the test."""
    try:
        if process.stdin:
            process.stdin.close()
    except OSError:
        pass
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
