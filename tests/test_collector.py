"""`sidecar.collector.settle_heap`: the collector's schedule, and large blocks given back
to the system when freed (glibc's mmap threshold fixed), in a real process."""

from __future__ import annotations

import gc
import os
import subprocess
import sys

from tests.conftest import REPO

_GROWTH = """
import sys
from sidecar.collector import settle_heap
if sys.argv[1] == "on":
    settle_heap()
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1])
first = bytearray(8 << 20)  # a large block freed: glibc raises its threshold here, unless fixed
del first
before = rss()
pages = [bytearray(1 << 20) for _ in range(24)]  # 24 tools/list-sized buffers, then gone
del pages
print(rss() - before)
"""


def _growth_kb(mode: str) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    out = subprocess.run([sys.executable, "-c", _GROWTH, mode], capture_output=True, text=True, check=True,
                         cwd=str(REPO), env=env).stdout
    return int(out)


def test_large_blocks_go_back_to_the_system_when_freed() -> None:
    settled, default = _growth_kb("on"), _growth_kb("off")
    assert settled < 2048, settled  # under 2 MB kept of 24 MB freed
    assert default > settled, (default, settled)


def test_the_young_generation_is_wider_and_start_up_frozen() -> None:
    code = ("import gc; from sidecar.collector import settle_heap, YOUNG_THRESHOLD; settle_heap(); settle_heap(); "
            "print(gc.get_threshold()[0] == YOUNG_THRESHOLD, gc.get_freeze_count() > 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=str(REPO))
    assert out.stdout.split() == ["True", "True"]
    assert gc.get_threshold()[0] != 0  # this process is untouched


def test_the_collector_held_for_start_up_is_on_again_once_the_heap_is_settled() -> None:
    """`hold_for_start` switches it off until `settle_heap` (or `resume`); a collector some
    other code switched off stays off (only the hold's own is resumed)."""
    code = ("import gc; from sidecar.collector import hold_for_start, resume, settle_heap; "
            "hold_for_start(); held = gc.isenabled(); settle_heap(); settled = gc.isenabled(); resume(); "
            "gc.disable(); hold_for_start(); settle_heap(); resume(); "
            "print(held, settled, gc.isenabled())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=str(REPO))
    assert out.stdout.split() == ["False", "True", "False"]
    assert gc.isenabled()  # this process is untouched
