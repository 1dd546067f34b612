"""Alternating blocks: candidates that are all open at once, measured in the same minute.

Owns the method behind a paired "added" figure. A lane is one open connection to one
server with its calls ready to go: given n, it makes n sequential calls and returns each
round trip in seconds. `alternate` warms every lane, then runs `blocks` blocks; in each
block every lane makes `size` calls in turn, in an order shuffled anew for each block (a
plain rotation keeps each lane behind the same neighbour, and an A/A run of two equal
sidecars read 5 % apart that way), and each block of each lane leaves the
median of its round trips and the CPU its server processes spent in it. A slow stretch
of the machine then lands on every lane within the same few milliseconds, and the
difference of two lanes taken block by block (`paired`) cancels most of it; the median
of those differences over many short blocks is the figure (`Spread` keeps its quartiles
too, so a reader sees how far the blocks disagreed).

While the blocks run (`pinned`), this client runs on one core and every thread of every
server process, and of the processes they started, on another: left to the scheduler, a
call's processes land on one core or on two by chance, and its round trip moves with that
choice more than a proxy adds; pinned, every lane's calls cross between the same two cores.
(`bench.paired_calls`, the stdio rows' own measurement, places its processes the same way.)

Nothing here knows MCP or HTTP: `bench.http_calls` builds lanes over stdio and HTTP.
Refuses to judge: no targets here.
"""

from __future__ import annotations

import os
import random
import statistics
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from bench.probes import cpu_seconds

__all__ = ["Lane", "LaneRecord", "Spread", "alternate", "cpu_ratios", "paired", "pinned", "threads_below"]

Lane = Callable[[int], list[float]]  # n sequential calls -> their round trips (seconds)


@dataclass
class LaneRecord:
    """What one lane read over every block."""

    times: list[float] = field(default_factory=list)  # every call's round trip, seconds
    block_medians: list[float] = field(default_factory=list)  # one per block, seconds
    block_cpu_s: list[float] = field(default_factory=list)  # its server processes' CPU, one per block
    cpu_known: bool = True

    @property
    def cpu_s(self) -> float:
        return sum(self.block_cpu_s)

    def joined(self, other: LaneRecord) -> LaneRecord:
        """This lane's blocks followed by `other`'s (the same lane, another set of processes)."""
        return LaneRecord(self.times + other.times, self.block_medians + other.block_medians,
                          self.block_cpu_s + other.block_cpu_s, self.cpu_known and other.cpu_known)

    def cpu_per_call_us(self) -> float | None:
        return self.cpu_s / len(self.times) * 1e6 if self.cpu_known and self.times else None


@dataclass(frozen=True)
class Spread:
    """The median of per-block values and their quartiles (microseconds)."""

    median: float
    q1: float
    q3: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        if len(values) < 2:
            value = values[0] if values else float("nan")
            return cls(value, value, value)
        q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
        return cls(median, q1, q3)


def _cpu(pids: Sequence[int]) -> float | None:
    total = 0.0
    for pid in pids:
        seconds = cpu_seconds(pid)
        if seconds is None:
            return None
        total += seconds
    return total


def alternate(lanes: Mapping[str, Lane], pids: Mapping[str, Sequence[int]], blocks: int, size: int,
              warmup: int = 0, seed: int = 35) -> dict[str, LaneRecord]:
    """`blocks` blocks of `size` calls on every lane, each block in its own shuffled order
    (seeded: a run is repeatable), after `warmup` calls each, not kept; `pids[name]`: the
    processes whose CPU a lane's blocks are charged (none: not measured)."""
    names = list(lanes)
    records = {name: LaneRecord(cpu_known=bool(pids.get(name))) for name in names}
    for name in names:
        if warmup:
            lanes[name](warmup)
    shuffler = random.Random(seed)
    for _ in range(blocks):
        for name in shuffler.sample(names, len(names)):
            record, watched = records[name], pids.get(name, ())
            before = _cpu(watched) if record.cpu_known else None
            times = lanes[name](size)
            after = _cpu(watched) if record.cpu_known else None
            if before is None or after is None:
                record.cpu_known = False
            else:
                record.block_cpu_s.append(after - before)
            record.times += times
            record.block_medians.append(statistics.median(times))
    return records


def paired(records: Mapping[str, LaneRecord], lane: str, base: str) -> list[float]:
    """`lane`'s block medians minus `base`'s, block by block, in microseconds."""
    return [(mine - theirs) * 1e6
            for mine, theirs in zip(records[lane].block_medians, records[base].block_medians, strict=True)]


def cpu_ratios(records: Mapping[str, LaneRecord], lane: str, base: str) -> list[float]:
    """`lane`'s CPU over `base`'s, block by block (both measured, the base's not zero)."""
    mine, theirs = records[lane], records[base]
    if not (mine.cpu_known and theirs.cpu_known):
        return []
    return [a / b for a, b in zip(mine.block_cpu_s, theirs.block_cpu_s, strict=True) if b > 0]


def threads_below(pid: int) -> list[int]:
    """Every thread of `pid` and of every process below it."""
    found: list[int] = []
    pending = [pid]
    while pending:
        proc = pending.pop()
        try:
            tids = [int(tid) for tid in os.listdir(f"/proc/{proc}/task")]
        except OSError:
            continue
        found += tids
        for tid in tids:
            try:
                with open(f"/proc/{proc}/task/{tid}/children") as children:
                    pending += [int(child) for child in children.read().split()]
            except OSError:
                pass
    return found


def _place(pids: Iterable[int], client: set[int], servers: set[int]) -> None:
    os.sched_setaffinity(0, client)
    for pid in pids:
        for tid in threads_below(pid):
            try:
                os.sched_setaffinity(tid, servers)
            except OSError:
                pass  # a thread that ended meanwhile


@contextmanager
def pinned(pids: Iterable[int]) -> Iterator[bool]:
    """This client on the first core it may use, every thread of `pids` and of their
    children on the second, until the block ends (then every core again); True when
    pinned, False on a machine with one core."""
    every = sorted(os.sched_getaffinity(0))
    if len(every) < 2:
        yield False
        return
    servers = list(pids)
    _place(servers, {every[0]}, {every[1]})
    try:
        yield True
    finally:
        _place(servers, set(every), set(every))
