"""First sight of a big server, timed in memory with a loop-lag probe: what trusting 425
new tool definitions (digests, the poisoning scan, the first pins and their write to a
real health file) costs in all, and the longest the event loop waits on it at a time.

Timed in a fresh interpreter whose `hashlib` has the interpreter's own SHA-256, as a stdio
start's has (the bench's own process may have OpenSSL's loaded, several ms quicker for the
digests). Two ways, alternated round by round, each on a fresh trust and a fresh health file:
  screen_only   the screen alone, as a face ran it before `Trust.prepare` (one stretch)
  prepared      `Trust.prepare` (slices of a few ms), then the screen, as the face runs it now
Figures (medians over rounds, CPU of this process by `time.process_time`):
  *_cpu_ms          the whole first sight, timed in a run of its own without the probe (the
                    probe spins while the loop waits, on the pins' write in its thread say)
  *_longest_ms      the longest gap between two turns of a probe that only yields, in CPU
                    time of the loop's thread (*_longest_wall_ms: in wall time, preemption included)
  same_verdict      1 when both ways list and hold the same tools and save the same pins

    python -m bench.first_sight [--rounds N]

With `--tree` (once or more), each round starts a fresh interpreter per tree (from its
sources; the order rotated round by round) that loads the loop's libraries without OpenSSL
as a stdio start does, decodes the GitHub-sized catalog (425 tools) and times, in CPU of the
process: the scan's import and `prepare_listing` on a first sight (digests, the scan, the
pins; no write). Prints each tree's medians [range] and its paired differences from the first:

    python -m bench.first_sight --tree /tmp/old --tree . --rounds 15

With `--hostile`, each round starts a fresh interpreter per tree (alternated as above) that
scans hostile listings with `scan_steps` (nothing remembered before each), and prints per shape
the CPU of the whole scan and of its longest step (`time.thread_time` around each step; the
collector held off, as `prepare_listing` holds it), medians [range]: a description of random
7-letter words (`--megabytes`, 5 by default), one random word as long, 80 definitions of
64 KB of random words, and a 1 MB description:

    python -m bench.first_sight --hostile --tree /tmp/old --tree . --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["time_first_sight"]


class _Probe:
    """Yields to the loop over and over; the longest gap between its turns is the loop's
    longest stall by anything else: in CPU time of the loop's thread (`time.thread_time`,
    which a loaded machine's preemption does not inflate) and in wall time."""

    def __init__(self) -> None:
        self.longest = self.longest_wall = 0.0
        self.running = True

    async def run(self) -> None:
        last, last_wall = time.thread_time(), time.perf_counter()
        while self.running:
            await asyncio.sleep(0)
            now, now_wall = time.thread_time(), time.perf_counter()
            self.longest = max(self.longest, now - last)
            self.longest_wall = max(self.longest_wall, now_wall - last_wall)
            last, last_wall = now, now_wall


def _fresh_scan_caches() -> None:
    from sidecar.trust import scan as poison

    poison.forget_texts()  # every text cache of the scan, as a new process starts


async def _one(tools: list[dict[str, Any]], folder: Path, prepared: bool,
               probed: bool = True) -> tuple[float, float, float, Any]:
    from sidecar.catalog import UpstreamListing
    from sidecar.catalog.facts import facts_for
    from sidecar.catalog.live import LiveCatalog
    from sidecar.config import Audit, parse_config
    from sidecar.gate.observers.audit import AuditLog
    from sidecar.trust.screen import Trust
    from sidecar.mounts.health import HealthFile, HealthPins

    config = parse_config({"mcpServers": {"shop": {"command": "x"}}}, {})
    live = LiveCatalog(facts_for(config, config.servers))
    server = config.servers[0]
    health = HealthFile(folder / "mcp-health.json")
    trust = Trust([server], AuditLog(Audit()), HealthPins(health, live), live=live)
    _fresh_scan_caches()
    probe = _Probe()
    probe.running = probed
    running = asyncio.create_task(probe.run())
    await asyncio.sleep(0)
    cpu = time.process_time()
    if prepared:
        await trust.prepare("shop", tools)
    screened = trust.screen([UpstreamListing("shop", tools)])
    cpu = time.process_time() - cpu
    await asyncio.sleep(0)
    probe.running = False
    await running
    pins = health.load()["shop"].pins or {}
    outcome = ([t["name"] for t in screened[0].tools], sorted(trust.held), {n: p.digest for n, p in pins.items()})
    return cpu * 1e3, probe.longest * 1e3, probe.longest_wall * 1e3, outcome


def time_first_sight(rounds: int = 5) -> dict[str, float | str]:
    """Both ways, alternated; medians over `rounds` ({"error": ...} when it cannot run), in a
    fresh interpreter (`_AS_STARTED`): this process may have OpenSSL's SHA-256 behind
    `hashlib` (the bench's HTTP clients load it), which a stdio start never loads, and the
    digests would run several ms quicker than a sidecar's."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", _AS_STARTED, str(rounds)], env=env, cwd=str(root),
                          capture_output=True, text=True)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1][:300]}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _measured_here(rounds: int) -> dict[str, float | str]:
    try:
        return dict(_figures(rounds))
    except Exception as exc:  # noqa: BLE001 (the report names the failure; the run goes on)
        return {"error": f"{type(exc).__name__}: {exc}"}


_AS_STARTED = """
from sidecar.loop import loop_libraries_without_openssl
assert loop_libraries_without_openssl()  # hashlib without OpenSSL, as a stdio start whose servers are all children
import json, sys
from bench.first_sight import _measured_here
import hashlib
figures = _measured_here(int(sys.argv[1]))
figures["openssl_sha256"] = float("openssl" in hashlib.sha256.__name__)  # 0: the interpreter's own
print(json.dumps(figures))
"""


def _figures(rounds: int) -> dict[str, float]:
    from sidecar.collector import settle_heap
    from tests.catalog.fixture_shop import shop_tools

    tools = shop_tools()
    settle_heap()  # the collector's schedule the sidecar runs under (else a full collection lands in a slice)
    figures: dict[str, list[float]] = {}
    same = True
    for _ in range(rounds):
        outcomes = []
        for prepared in (False, True):
            with tempfile.TemporaryDirectory(prefix="omb-first-sight-") as folder:
                _, longest, wall, outcome = asyncio.run(_one(copy.deepcopy(tools), Path(folder), prepared))
            with tempfile.TemporaryDirectory(prefix="omb-first-sight-") as folder:
                cpu = asyncio.run(_one(copy.deepcopy(tools), Path(folder), prepared, probed=False))[0]
            name = "prepared" if prepared else "screen_only"
            figures.setdefault(f"{name}_cpu_ms", []).append(cpu)
            figures.setdefault(f"{name}_longest_ms", []).append(longest)
            figures.setdefault(f"{name}_longest_wall_ms", []).append(wall)
            outcomes.append(outcome)
        same = same and outcomes[0] == outcomes[1]
    result = {key: round(statistics.median(values), 2) for key, values in figures.items()}
    result |= {f"{key}_max": round(max(values), 2) for key, values in figures.items() if "longest" in key}
    result["tools"] = float(len(tools))
    result["same_verdict"] = 1.0 if same else 0.0
    return result


_IN_PROCESS = """
from sidecar.loop import loop_libraries_without_openssl
assert loop_libraries_without_openssl()  # as a stdio start whose servers are all children (asyncio not loaded before)
import asyncio, json, sys, time
import msgspec
from bench.catalogs import GITHUB, build_catalog
listing = msgspec.json.encode({"tools": build_catalog(GITHUB)})

async def main():
    began = time.process_time()
    import sidecar.trust.scan  # loaded ahead by a fresh folder's trust
    imported = time.process_time()
    from sidecar.trust.first_sight import prepare_listing
    from sidecar.trust.pins import Memo
    tools = msgspec.json.decode(listing)["tools"]
    start = time.process_time()
    await prepare_listing(tools, Memo(), first_sight=True, shadowing=False)
    print(json.dumps({"scan_import_ms": (imported - began) * 1e3, "prepare_ms": (time.process_time() - start) * 1e3}))

asyncio.run(main())
"""


_HOSTILE = """
import gc, json, random, string, sys, time
from sidecar.trust import scan

def words(size, seed):
    rng = random.Random(seed)
    return " ".join("".join(rng.choices(string.ascii_lowercase, k=7)) for _ in range(size // 8 + 1))[:size]

def tool(name, description):
    return {"name": name, "description": description, "inputSchema": {"type": "object"}}

size = int(float(sys.argv[1]) * 1_000_000)
shapes = {
    "words": [tool("w", words(size, 1))],
    "one_word": [tool("o", "".join(random.Random(2).choices(string.ascii_lowercase, k=size)))],
    "80x64KB": [tool(f"m{i}", words(64_000, 10 + i)) for i in range(80)],
    "1MB": [tool("d", words(1_000_000, 3))],
}
figures = {}
for name, tools in shapes.items():
    scan.forget_texts()
    gc.collect()
    gc.disable()  # as `prepare_listing` holds the collector off (its young collections run between slices)
    steps = scan.scan_steps(tools)
    longest, began = 0.0, time.process_time()
    while True:
        at = time.thread_time()
        try:
            next(steps)
        except StopIteration:
            longest = max(longest, time.thread_time() - at)
            break
        longest = max(longest, time.thread_time() - at)
    figures[name + "_cpu_ms"] = (time.process_time() - began) * 1e3
    gc.enable()
    figures[name + "_longest_ms"] = longest * 1e3
print(json.dumps(figures))
"""


def time_trees(trees: list[Path], rounds: int, script: str = _IN_PROCESS,
               args: tuple[str, ...] = ()) -> list[list[dict[str, float]]]:
    """Per tree, per round: the figures of `script` (`_IN_PROCESS`) run from that tree's sources."""
    import os
    import subprocess
    import sys

    found: list[list[dict[str, float]]] = [[] for _ in trees]
    for n in range(rounds):
        for k in range(len(trees)):
            t = (n + k) % len(trees)
            env = dict(os.environ, PYTHONPATH=str(trees[t]), PYTHONDONTWRITEBYTECODE="")
            out = subprocess.run([sys.executable, "-c", script, *args], env=env, cwd=str(trees[t]),
                                 capture_output=True, text=True, check=True).stdout
            found[t].append(json.loads(out))
    return found


def _print_trees(trees: list[Path], rounds: int, hostile: float | None = None) -> None:
    import compileall

    for tree in trees:  # bytecode written first, as an install has it
        compileall.compile_dir(str(tree / "sidecar"), quiet=1)
    found = (time_trees(trees, rounds) if hostile is None
             else time_trees(trees, rounds, _HOSTILE, (str(hostile),)))
    for n, (tree, own) in enumerate(zip(trees, found, strict=True)):
        print(f"tree {n + 1} ({tree}), {rounds} rounds, CPU ms")
        for key in own[0]:
            values = [r[key] for r in own]
            diff = [a[key] - b[key] for a, b in zip(own, found[0], strict=True)]
            print(f"  {key:19s} {statistics.median(values):6.1f} [{min(values):6.1f}-{max(values):6.1f}]  "
                  f"paired vs tree 1: {statistics.median(diff):+5.1f} [{min(diff):+5.1f}..{max(diff):+5.1f}]")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.first_sight", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tree", action="append", type=Path, default=[],
                        help="a source tree to time prepare_listing from, in a fresh process (alternated)")
    parser.add_argument("--hostile", action="store_true",
                        help="scan hostile listings instead (by tree; this tree when none is given)")
    parser.add_argument("--megabytes", type=float, default=5.0, help="the size of the large hostile texts")
    args = parser.parse_args()
    if args.hostile:
        _print_trees([tree.resolve() for tree in args.tree or [Path(".")]], args.rounds, args.megabytes)
    elif args.tree:
        _print_trees([tree.resolve() for tree in args.tree], args.rounds)
    else:
        print(json.dumps(time_first_sight(args.rounds), indent=1))
