"""Where an idle sidecar's memory sits, by cause (issue 23's idle RSS target).

Starts the sidecar as the bench's session case does (one fast upstream of 425 tools, the
bench's config), initializes, lists until complete, lists three times more and then asks
it nothing: it reads VmRSS, `/proc/PID/smaps_rollup` and the RSS of each mapped file, and,
through a SIGUSR1 handler its launcher installs before `sidecar.cli.main` runs, the
modules it has loaded (or, with `--trace`, tracemalloc's largest live allocations). The
fast upstream alone (direct) is read the same way. MB by cause: fresh interpreters import
direct's modules and then each group of the sidecar's idle modules in turn (as the
sidecar loads them: without OpenSSL when it did), each step's VmRSS over the last; what
the idle sidecar holds beyond all its modules is its live data (the catalog's shapes).
Import-alone figures share the allocator's arenas differently from a real start, so a
group's figure is good to a few tenths of a MB.

    python -m bench.memory                         # 3 starts, pins kept (the bench's rounds 2+)
    python -m bench.memory --modules --trace       # plus its own modules and tracemalloc by file
    python -m bench.memory --compare OLD_CHECKOUT  # a column for another checkout, measured first
    python -m bench.memory --compare OLD --docs docs/generated   # write memory.json, memory-causes.md

Refuses to judge: the target is the bench's (`bench.report`).
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
from typing import Any

from bench import doc_files
from bench.candidates import REPO_ROOT, Upstream, upstream_argv, write_config
from bench.catalogs import GITHUB
from bench.client import Connection
from bench.probes import memory_kb

__all__ = ["idle_reading", "main", "measure_tree", "render_docs"]

WRITER = "bench.memory"

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


def _wait_for(path: Path, timeout: float = 10.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"no dump at {path}")
        time.sleep(0.01)  # polling a file the child writes; no event to wait on across processes
    loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded


def _idle(conn: Connection) -> None:
    conn.initialize(60.0)
    conn.list_tools_until(GITHUB.tools, 60.0)
    for _ in range(3):  # as the bench's warm lists
        conn.list_tools(60.0)


def idle_reading(workdir: Path, *, tree: Path = REPO_ROOT, dump: str = "", sidecar: bool = True) -> dict[str, Any]:
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
        reading: dict[str, Any] = {"vmrss_kb": (memory_kb(conn.pid) or {}).get("VmRSS", 0),
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
    """VmRSS of a fresh interpreter that imports `modules` and nothing else runs; without
    OpenSSL (as `sidecar.loop` loads the loop) when neither `ssl` nor `_hashlib` is named."""
    lean = "hashlib" in modules and "ssl" not in modules and "_hashlib" not in modules
    load = ("from sidecar.loop import loop_libraries_without_openssl as lean; lean()\n" if "uvloop" in modules
            else "sys.modules['_hashlib'] = None\n")
    code = ("import sys\n" + (load if lean else "")
            + "for name in sys.argv[1:]:\n    try: __import__(name)\n    except Exception: pass\n"
            "print(open('/proc/self/status').read().split('VmRSS:')[1].split()[0])")
    out = subprocess.run([sys.executable, "-c", code, *modules], capture_output=True, text=True,
                         cwd=str(tree), env={**os.environ, "PYTHONPATH": str(tree)}, check=True).stdout
    return int(out.strip())


# The sidecar's idle modules in the order `--causes` adds them, each group on top of the last.
_CAUSES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("OpenSSL: ssl, hashlib, hmac, secrets", ("ssl", "_ssl", "hashlib", "_hashlib", "_blake2", "_sha256", "_sha1",
                                              "_md5", "_sha3", "hmac", "secrets", "base64")),
    ("asyncio, uvloop", ("asyncio", "concurrent", "selectors", "socket", "select", "_asyncio", "contextvars",
                         "uvloop")),
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


def _median_mb(readings: list[dict[str, Any]]) -> float:
    return round(statistics.median(int(r["vmrss_kb"]) for r in readings) / 1024, 1)


def measure_tree(tree: Path, starts: int, with_causes: bool = True) -> dict[str, Any]:
    """Idle VmRSS of `starts` starts of the sidecar of `tree` (its pins kept by a start
    before them, as in the bench's later rounds) and of the fast upstream alone; the
    sidecar's modules, its RSS by mapping, and (`with_causes`) MB by cause."""
    with tempfile.TemporaryDirectory(prefix="omb-memory-") as tmp:
        work = Path(tmp)
        idle_reading(work, tree=tree)  # the first sight: pins kept from here on
        readings = [idle_reading(work, tree=tree, dump="modules") for _ in range(starts)]
        direct = [idle_reading(work, tree=tree, sidecar=False, dump="modules") for _ in range(starts)]
        traced: dict[str, Any] = (idle_reading(work, tree=tree, dump="lineno") if with_causes
                                  else {"traced": [], "traced_total": 0})
    modules, direct_modules = list(readings[0]["modules"]), list(direct[0]["modules"])
    idle_kb = int(statistics.median(int(r["vmrss_kb"]) for r in readings))
    return {"tree": _commit_of(tree), "sidecar_mb": _median_mb(readings), "direct_mb": _median_mb(direct),
            "sidecar_runs_mb": [round(int(r["vmrss_kb"]) / 1024, 1) for r in readings],
            "rollup_kb": readings[0]["rollup"], "mappings_kb": _top(readings[0]["mappings"]),
            "modules": len(modules), "only_the_sidecars": sorted(set(modules) - set(direct_modules)),
            "causes": [[label, round(mb, 2)] for label, mb in causes(modules, direct_modules, idle_kb, tree)]
            if with_causes else [],
            "traced_mb": round(int(traced["traced_total"]) / 2**20, 1),
            "traced_top": [[_short(where, tree), round(size / 2**20, 2), count] for where, size, count in traced["traced"][:8]]}


def _short(where: str, tree: Path) -> str:
    """A traced allocation's place without the checkout's or the interpreter's folders."""
    for folder in (str(tree.resolve()) + "/", str(Path(sys.prefix).resolve()) + "/", sys.base_prefix + "/lib/"):
        where = where.replace(folder, "")
    return where.split("site-packages/")[-1]


def _commit_of(tree: Path) -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=tree, capture_output=True, text=True)
    return done.stdout.strip() or str(tree)


def _top(mapped: dict[str, int], count: int = 12) -> dict[str, int]:
    return dict(sorted(mapped.items(), key=lambda kv: -kv[1])[:count])


# The docs' rows: the printed groups of the sidecar's own modules (and of the standard
# library only it loads) summed, as import-alone figures are not finer than that.
_ROWS = (("interpreter", ("interpreter",)), ("direct's modules (msgspec and the standard library)", ("direct's",)),
         ("OpenSSL (`ssl`, `_hashlib`: libcrypto) and hashlib", ("OpenSSL",)), ("asyncio and uvloop", ("asyncio",)),
         ("the sidecar's own modules, and the standard library only it loads", ("other stdlib", "sidecar")),
         ("live data (idle VmRSS less every module's)", ("live data",)))


def _row_mb(causes: list[list[Any]], starts: tuple[str, ...]) -> float:
    return sum(float(mb) for label, mb in causes if str(label).startswith(starts))


def render_docs(figures: dict[str, Any]) -> dict[str, str]:
    """The MB-by-cause table (one column per tree measured, the earlier first) and each
    tree's largest live allocations at rest."""
    trees = figures["result"]["trees"]
    rows = [[label, *(f"{_row_mb(t['causes'], starts):.1f}" for t in trees)] for label, starts in _ROWS]
    rows.append(["**idle VmRSS, the sidecar**", *(f"**{t['sidecar_mb']:.1f}**" for t in trees)])
    rows.append(["idle VmRSS, direct (the fast upstream alone)", *(f"{t['direct_mb']:.1f}" for t in trees)])
    causes = doc_files.table(["MB, idle after the 425-tool listing", *(f"`{t['tree']}`" for t in trees)], rows)
    live = doc_files.table(["commit", "allocated at", "MB", "blocks"],
                           [[f"`{t['tree']}`", f"`{where}`", f"{mb:.2f}", f"{count:,}"]
                            for t in trees for where, mb, count in t["traced_top"]])
    return {"memory-causes.md": doc_files.page(WRITER, causes, figures["measured"]),
            "memory-live.md": doc_files.page(WRITER, live, figures["measured"])}


def _print(result: dict[str, Any], modules: bool) -> None:
    print(f"tree {result['tree']}: sidecar {result['sidecar_mb']} MB {result['sidecar_runs_mb']}, "
          f"direct {result['direct_mb']} MB, {result['modules']} modules")
    print("  RSS by mapping:", ", ".join(f"{Path(k).name} {v / 1024:.2f}" for k, v in result["mappings_kb"].items()))
    for label, mb in result["causes"]:
        print(f"  {mb:6.2f}  {label}")
    if modules:
        print("  only the sidecar's:", " ".join(result["only_the_sidecars"]))


def _print_traced(tree: Path, by_line: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="omb-memory-") as tmp:
        idle_reading(Path(tmp), tree=tree)
        traced = idle_reading(Path(tmp), tree=tree, dump="lineno" if by_line else "trace")
    print(f"  tracemalloc at rest: {int(traced['traced_total']) / 1e6:.1f} MB traced")
    for where, size, count in traced["traced"][:25]:
        print(f"    {size / 1e6:6.2f} MB {count:7d}  {where}")


def main(argv: list[str] | None = None) -> int:
    args_list = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m bench.memory", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--modules", action="store_true", help="list the modules only the sidecar loads")
    parser.add_argument("--trace", action="store_true", help="tracemalloc top files (a separate start)")
    parser.add_argument("--lines", action="store_true", help="with --trace: by line, not by file")
    parser.add_argument("--no-causes", action="store_true", help="skip MB by cause (module groups imported in turn)")
    parser.add_argument("--tree", type=Path, default=REPO_ROOT, help="the checkout to run the sidecar from")
    parser.add_argument("--compare", type=Path, help="another checkout, measured first (its column first)")
    parser.add_argument("--docs", type=Path, help="write memory.json and memory-causes.md into this folder")
    args = parser.parse_args(args_list)
    trees = [t for t in (args.compare, args.tree) if t is not None]
    results = [measure_tree(t, args.starts, not args.no_causes) for t in trees]
    for result in results:
        _print(result, args.modules)
    if args.trace:
        _print_traced(args.tree, args.lines)
    if args.docs is not None:
        # module names stay out of the docs' JSON (`tools/rooms.py` reads dotted names there)
        kept = [{key: value for key, value in r.items() if key != "only_the_sidecars"} for r in results]
        for path in doc_files.publish(WRITER, "memory", {"trees": kept}, args_list):
            print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
