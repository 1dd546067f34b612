"""Read a process's CPU time, memory and the machine's identity from /proc.

Owns the Linux-only accounting the benchmarks need without psutil: user+system
CPU seconds of one pid (all its threads, not its children), VmRSS and VmHWM,
and a description of the machine. Returns None where /proc has no answer
(the process is gone), and refuses nothing else.
"""

from __future__ import annotations

import os
import platform
import sys

__all__ = ["cpu_seconds", "load_average", "machine", "memory_kb"]

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float | None:
    """CPU seconds `pid` has run: its own threads, not its children.

    Sums the nanosecond on-CPU time of each live thread (`/proc/PID/task/*/schedstat`),
    because utime+stime tick at 10 ms, too coarse for microseconds per call; a
    thread that ended in between is not counted. Falls back to utime+stime.
    """
    try:
        total = 0
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat", "rb") as schedstat:
                total += int(schedstat.read().split()[0])
        return total / 1e9
    except (OSError, ValueError, IndexError):
        return _cpu_ticks(pid)


def _cpu_ticks(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    # after the command name: state is field 3, utime 14, stime 15 (1-based)
    return (int(fields[11]) + int(fields[12])) / _TICKS


def memory_kb(pid: int) -> dict[str, int] | None:
    """{"VmRSS": kB, "VmHWM": kB} of `pid`."""
    wanted = {b"VmRSS:": "VmRSS", b"VmHWM:": "VmHWM"}
    found: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                key, _, rest = line.partition(b"\t")
                if key in wanted:
                    found[wanted[key]] = int(rest.split()[0])
    except OSError:
        return None
    return found or None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> dict[str, object]:
    """CPU model, core count, Python and kernel: the table header and JSON head."""
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "kernel": platform.release(),
        "platform": platform.platform(terse=True),
        "loadavg": load_average(),
    }


def load_average() -> list[float] | None:
    """1, 5 and 15 minute load averages: a busy machine makes every figure noisier."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None
