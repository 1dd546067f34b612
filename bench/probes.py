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

__all__ = ["cpu_seconds", "machine", "memory_kb"]

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float | None:
    """utime + stime of `pid` in seconds (the process's own threads only)."""
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
    }
