"""Where an idle sidecar's memory sits: a debugging aid, not a benchmark of record.

Starts the sidecar as the bench's session case does (one fast upstream of 425 tools, the
echo catalog, the bench's config), initializes, lists until complete and then asks it
nothing: it reads `/proc/PID/smaps_rollup` and the mappings by file, and, through a
SIGUSR1 handler its launcher installs before `sidecar.cli.main` runs, the modules it has
loaded and (with `--trace`) the tracemalloc top allocations by file. The fast upstream
(direct) is read the same way for its own modules and RSS.

    python -m bench.memory                    # RSS of 3 starts, pins kept (the bench's rounds 2+)
    python -m bench.memory --modules          # plus the modules only the sidecar loads
    python -m bench.memory --trace            # plus tracemalloc by file (its own RSS is higher)
    python -m bench.memory --imports          # RSS of importing the sidecar's idle modules alone
    python -m bench.memory --causes           # MB by cause: the idle modules by group, then live data
    python -m bench.memory --tree /work/main  # the same for another checkout

Owns nothing the bench reports: it prints, for reading.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.candidates import REPO_ROOT, Upstream, upstream_argv, write_config
from bench.catalogs import GITHUB
from bench.client import Connection
from bench.probes import memory_kb

__all__ = ["idle_reading", "main"]

# The launcher: the sidecar's own `main`, with a SIGUSR1 handler that writes what was asked
# for to the file named first; a tracemalloc start when the second argument says so.
_LAUNCHER = """\
import signal, sys
out, trace = sys.argv[1], sys.argv[2] in ("trace", "lineno")
by = "lineno" if sys.argv[2] == "lineno" else "filename"
if trace:
    import tracemalloc; tracemalloc.start(1)
def dump(*_):
    report = {"modules": sorted(sys.modules)}
    if trace:
        import tracemalloc
        stats = tracemalloc.take_snapshot().statistics(by)
        report["traced_total"] = sum(s.size for s in stats)
        report["traced"] = [[f"{s.traceback[0].filename}:{s.traceback[0].lineno}" if by == "lineno"
                             else s.traceback[0].filename, s.size, s.count] for s in stats[:40]]
    with open(out + ".tmp", "w") as f:
        f.write(__import__("json").dumps(report))
    __import__("os").replace(out + ".tmp", out)
signal.signal(signal.SIGUSR1, dump)
from sidecar.cli import main
raise SystemExit(main(sys.argv[3:]))
"""


def rollup(pid: int) -> dict[str, int]:
    """`/proc/PID/smaps_rollup` in kB: Rss, Pss, Anonymous, Private_Dirty and the rest."""
    found: dict[str, int] = {}
    with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as text:
        for line in text:
            key, _, rest = line.partition(":")
            if rest.strip().endswith("kB"):
                found[key] = int(rest.split()[0])
    return found


def mappings(pid: int) -> dict[str, int]:
    """RSS in kB per mapped file (`[anon]` for anonymous memory, `[heap]`, `[stack]`)."""
    totals: dict[str, int] = {}
    name = "[anon]"
    with open(f"/proc/{pid}/smaps", encoding="utf-8", errors="replace") as text:
        for line in text:
            head = line.split(maxsplit=5)
            if len(head) >= 5 and "-" in head[0] and ":" not in head[0]:
                name = head[5].strip() if len(head) == 6 else "[anon]"
            elif line.startswith("Rss:"):
                totals[name] = totals.get(name, 0) + int(line.split()[1])
    return totals


def _wait_for(path: Path, timeout: float = 10.0) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"no dump at {path}")
        time.sleep(0.01)  # polling a file the child writes; no event to wait on across processes
    loaded: dict[str, object] = json.loads(path.read_text())
    return loaded


def _idle(conn: Connection) -> None:
    conn.initialize(60.0)
    conn.list_tools_until(GITHUB.tools, 60.0)
    for _ in range(3):  # as the bench's warm lists
        conn.list_tools(60.0)


def idle_reading(workdir: Path, *, tree: Path = REPO_ROOT, dump: str = "", sidecar: bool = True) -> dict[str, object]:
    """One start of the sidecar (or, `sidecar=False`, of the fast upstream alone), idle after
    the list: VmRSS, the rollup, RSS per mapped file and, when `dump` is "modules" or
    "trace", what the process says of itself."""
    upstreams = [Upstream("gh", GITHUB)]
    out = workdir / f"dump-{time.monotonic_ns()}.json"
    if sidecar:
        config = write_config(upstreams, workdir)
        argv = [sys.executable, "-c", _LAUNCHER, str(out), dump or "none", "--config", str(config)]
    else:
        argv = upstream_argv(GITHUB)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    with Connection(argv, cwd=str(tree), env=env, stderr_path=workdir / "memory.stderr") as conn:
        _idle(conn)
        reading: dict[str, object] = {"vmrss_kb": (memory_kb(conn.pid) or {}).get("VmRSS", 0),
                                      "rollup": rollup(conn.pid), "mappings": mappings(conn.pid)}
        if dump and sidecar:
            os.kill(conn.pid, signal.SIGUSR1)
            reading |= _wait_for(out)
        elif dump:
            reading["modules"] = _upstream_modules(tree)
    return reading


def _upstream_modules(tree: Path) -> list[str]:
    """The fast upstream's modules at import (it serves no signal of ours; on stdio it
    loads nothing more as it runs)."""
    code = "import sys, bench.fast_upstream; print(' '.join(sorted(sys.modules)))"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(tree),
                          env={**os.environ, "PYTHONPATH": str(tree)}, check=True).stdout.split()


def import_rss_kb(modules: list[str], tree: Path = REPO_ROOT) -> int:
    """VmRSS of a fresh interpreter that imports `modules` and nothing else runs."""
    code = ("import sys\nfor name in sys.argv[1:]:\n    try: __import__(name)\n    except Exception: pass\n"
            "print(open('/proc/self/status').read().split('VmRSS:')[1].split()[0])")
    out = subprocess.run([sys.executable, "-c", code, *modules], capture_output=True, text=True,
                         cwd=str(tree), env={**os.environ, "PYTHONPATH": str(tree)}, check=True).stdout
    return int(out.strip())


# The sidecar's idle modules in the order `--causes` adds them, each group on top of the last.
_CAUSES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("asyncio", ("asyncio", "concurrent", "selectors", "socket", "select", "_asyncio", "contextvars")),
    ("ssl", ("ssl", "_ssl")),
    ("uvloop", ("uvloop",)),
    ("hashlib, secrets", ("hashlib", "_hashlib", "_blake2", "secrets", "hmac", "base64")),
    ("other stdlib", ("",)),
    ("sidecar.wire, config, settings, errors", ("sidecar.wire", "sidecar.config", "sidecar.settings", "sidecar.errors")),
    ("sidecar.trust", ("sidecar.trust",)),
    ("sidecar.catalog", ("sidecar.catalog",)),
    ("sidecar.upstream", ("sidecar.upstream",)),
    ("sidecar.gate", ("sidecar.gate",)),
    ("sidecar.front, hub, mounts, rest", ("sidecar",)),
)


def _in_group(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(p == "" or module == p or module.startswith(p + ".") for p in prefixes)


def causes(modules: list[str], direct_modules: list[str], idle_kb: int, tree: Path) -> list[tuple[str, float]]:
    """MB by cause: the interpreter, direct's modules, then each group of the sidecar's idle
    modules imported on top (median of 3 fresh processes each), and the rest (live data)."""
    rows = [("interpreter", _median_import([], tree)), ("direct's modules", _median_import(direct_modules, tree))]
    loaded, left = list(direct_modules), [m for m in modules if m not in set(direct_modules)]
    for label, prefixes in _CAUSES:
        group = [m for m in left if _in_group(m, prefixes) and (prefixes != ("",) or not m.startswith("sidecar"))]
        left = [m for m in left if m not in set(group)]
        loaded += group
        rows.append((label, _median_import(loaded, tree)))
    steps = [(rows[0][0], rows[0][1])] + [(label, kb - rows[i][1]) for i, (label, kb) in enumerate(rows[1:])]
    steps.append(("live data (idle RSS - every module)", idle_kb - rows[-1][1]))
    return [(label, kb / 1024) for label, kb in steps]


def _median_import(modules: list[str], tree: Path) -> int:
    return int(statistics.median(import_rss_kb(modules, tree) for _ in range(3)))


def _print_rss(label: str, readings: list[dict[str, object]]) -> None:
    values = [int(r["vmrss_kb"]) for r in readings]  # type: ignore[call-overload]
    print(f"{label:10s} VmRSS idle: median {statistics.median(values) / 1024:.1f} MB  "
          f"({', '.join(f'{v / 1024:.1f}' for v in values)})")


def _print_mappings(reading: dict[str, object], top: int = 14) -> None:
    rows = sorted(reading["mappings"].items(), key=lambda kv: -kv[1])[:top]  # type: ignore[attr-defined]
    for name, kb in rows:
        print(f"    {kb / 1024:6.2f} MB  {name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.memory", description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--modules", action="store_true", help="list the modules only the sidecar loads")
    parser.add_argument("--trace", action="store_true", help="tracemalloc top files (a separate start)")
    parser.add_argument("--imports", action="store_true", help="RSS of importing the idle module set alone")
    parser.add_argument("--lines", action="store_true", help="with --trace: by line, not by file")
    parser.add_argument("--causes", action="store_true", help="MB by cause: module groups imported in turn")
    parser.add_argument("--tree", type=Path, default=REPO_ROOT, help="the checkout to run the sidecar from")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="omb-memory-") as tmp:
        work = Path(tmp)
        idle_reading(work, tree=args.tree)  # the first sight: pins kept from here on
        readings = [idle_reading(work, tree=args.tree, dump="modules") for _ in range(args.starts)]
        direct = [idle_reading(work, tree=args.tree, sidecar=False, dump="modules") for _ in range(args.starts)]
        _print_rss("sidecar", readings)
        _print_rss("direct", direct)
        print("  sidecar rollup:", {k: readings[0]["rollup"][k] for k in ("Rss", "Anonymous", "Private_Clean",  # type: ignore[index]
                                                                         "Shared_Clean", "Private_Dirty")})
        print("  sidecar RSS by mapping:")
        _print_mappings(readings[0])
        modules = list(readings[0]["modules"])  # type: ignore[call-overload]
        own = sorted(set(modules) - set(direct[0]["modules"]))  # type: ignore[call-overload]
        print(f"  modules: sidecar {len(modules)}, direct {len(direct[0]['modules'])}, "  # type: ignore[arg-type]
              f"only the sidecar's {len(own)}")
        if args.modules:
            print("   ", " ".join(own))
        if args.imports:
            base = import_rss_kb([], args.tree)
            floor = import_rss_kb(list(direct[0]["modules"]), args.tree)  # type: ignore[call-overload]
            every = import_rss_kb(modules, args.tree)
            print(f"  import alone: interpreter {base / 1024:.1f} MB, direct's modules {floor / 1024:.1f}, "
                  f"the sidecar's idle modules {every / 1024:.1f}")
        if args.causes:
            idle = int(statistics.median(int(r["vmrss_kb"]) for r in readings))  # type: ignore[call-overload]
            print("  MB by cause (imports cumulative, fresh processes):")
            for label, mb in causes(modules, list(direct[0]["modules"]), idle, args.tree):  # type: ignore[call-overload]
                print(f"    {mb:6.2f}  {label}")
        if args.trace:
            traced = idle_reading(work, tree=args.tree, dump="lineno" if args.lines else "trace")
            print(f"  tracemalloc at rest: {int(traced['traced_total']) / 1e6:.1f} MB traced")  # type: ignore[call-overload]
            for filename, size, count in traced["traced"][:25]:  # type: ignore[index]
                print(f"    {size / 1e6:6.2f} MB {count:7d}  {filename}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
