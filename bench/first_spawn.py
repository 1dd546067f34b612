"""The sidecar's CPU from its interpreter's start to its first upstream's spawn, tree against tree.

A plain `--config PATH` start spawns its stdio upstreams before anything else loads
(`sidecar.entry`, `sidecar.upstream.plain_config`); what it imports and does until then is
in series with the upstream's own start, so it is the part of start -> `tools/list` the
sidecar adds in front. Each start here runs the entry point of a tree (`--tree`, the
checkout by default) with the bench venv's interpreter (the built wheel's, no editable
finder: `bench.candidates.from_wheel`), as the installed `omb-sidecar` script does, or with
`re` imported first as pip's console-script launcher does (`--launcher console`); at the
spawn an audit hook reads the process's CPU time and ends it. The starts alternate between
the trees (and a bare `python -c pass`), and each one's median and quartiles are printed.

With `--answers`, each start goes on past the spawn against the bench's fast upstream of 425
tools (a listing snapshot kept by one full start first): stdin holds the engine's
`initialize`, `notifications/initialized` and `tools/list` before the start, and the
process's CPU (every thread's) is read as the early `initialize` answer and the listing's
answer from the snapshot are written; it then ends. A start whose listing did not come from
the snapshot before msgspec loaded is an error.

  python -m bench.first_spawn --tree OLD --tree . --rounds 30
  python -m bench.first_spawn --launcher console --launcher script --rounds 30
  python -m bench.first_spawn --answers --tree OLD --tree . --rounds 20
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.candidates import REPO_ROOT, from_wheel, upstream_argv, use
from bench.catalogs import GITHUB

__all__ = ["cpu_to_answers", "cpu_to_first_spawn"]

# Run as `python -c _PROBE TREE LAUNCHER --config PATH`: the tree's entry point, its CPU at the first spawn.
_PROBE = """
import sys
tree, launcher = sys.argv[1:3]
del sys.argv[1:3]
sys.path.insert(0, tree)
if launcher == "console":
    import re  # pip's console-script launcher, before the entry point
import os, time
def hook(event, args):
    if event == "os.posix_spawn":
        os.write(2, b"CPU %.3f\\n" % (time.process_time() * 1e3))
        os._exit(0)
sys.addaudithook(hook)
sys.argv[0] = "omb-sidecar"
from sidecar.entry import main
sys.exit(main())
"""


# Run as `python -c _ANSWERS TREE MODE --config PATH` (MODE "warm": a whole start, unwatched):
# the tree's entry point, its CPU as it writes the early answers on stdout (fd 1).
_ANSWERS = """
import sys
tree, mode = sys.argv[1:3]
del sys.argv[1:3]
sys.path.insert(0, tree)
import os, time
if mode != "warm":
    write, writev = os.write, os.writev
    def seen(fd, head):
        if fd == 1:
            what = b"listing" if b'"tools":[' in head else b"initialize"
            early = b"early" if "msgspec" not in sys.modules else b"late"
            write(2, b"CPU %s %s %.3f\\n" % (what, early, time.process_time() * 1e3))
            if what == b"listing":
                os._exit(0)
    def watched(fd, data):
        done = write(fd, data)
        seen(fd, bytes(data[:200]))
        return done
    def watched_parts(fd, parts):
        done = writev(fd, parts)
        seen(fd, b"".join(bytes(part[:200]) for part in parts)[:400])
        return done
    os.write, os.writev = watched, watched_parts
sys.argv[0] = "omb-sidecar"
from sidecar.entry import main
sys.exit(main())
"""
_ENGINE = b"".join(json.dumps(line, separators=(",", ":")).encode() + b"\n" for line in (
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))


def _start(python: str, tree: str, mode: str, config: Path) -> subprocess.CompletedProcess[bytes]:
    """One start of `tree` with the engine's three lines already waiting on its stdin."""
    read, write = os.pipe()
    os.write(write, _ENGINE)
    if mode != "warm":
        os.close(write)  # a watched start ends at the listing; a warm one keeps stdin open until killed
    try:
        return subprocess.run([python, "-c", _ANSWERS, tree, mode, "--config", str(config)], stdin=read,
                              capture_output=True, cwd="/", timeout=5 if mode == "warm" else 60)
    except subprocess.TimeoutExpired as ended:  # the warm start: the snapshot is kept by now
        return subprocess.CompletedProcess(ended.cmd, 0, ended.stdout or b"", ended.stderr or b"")
    finally:
        os.close(read)
        if mode == "warm":
            os.close(write)


def cpu_to_answers(python: str, trees: list[str], rounds: int, config: Path) -> dict[str, list[float]]:
    """Each tree's CPU ms at its early `initialize` answer and at its listing answered from
    the snapshot, `rounds` alternated starts (one warm start first keeps the snapshot)."""
    _start(python, trees[-1], "warm", config)
    found: dict[str, list[float]] = {}
    for _ in range(rounds):
        for tree in trees:
            done = _start(python, tree, "watch", config)
            seen = {line.split()[1]: line.split()[2:] for line in done.stderr.decode().splitlines()
                    if line.startswith("CPU ")}
            if seen.get("listing", [""])[0] != "early" or seen.get("initialize", [""])[0] != "early":
                raise RuntimeError(f"{tree}: no early answers ({seen}): {done.stderr.decode()[-800:]}")
            for what in ("initialize", "listing"):
                found.setdefault(f"{tree} {what}", []).append(float(seen[what][1]))
    return found


def cpu_to_first_spawn(python: str, arms: list[tuple[str, str]], rounds: int, config: Path) -> dict[str, list[float]]:
    """Each arm's (tree, launcher) CPU ms to the first spawn, `rounds` alternated starts; and
    the bare interpreter's CPU (`python -c pass`) under "bare"."""
    found: dict[str, list[float]] = {"bare": []}
    for _ in range(rounds):
        bare = subprocess.run([python, "-c", "import os, time; os.write(2, b'CPU %.3f' % (time.process_time() * 1e3))"],
                              capture_output=True, cwd="/")
        found["bare"].append(float(bare.stderr.split()[1]))
        for tree, launcher in arms:
            done = subprocess.run([python, "-c", _PROBE, tree, launcher, "--config", str(config)],
                                  stdin=subprocess.DEVNULL, capture_output=True, cwd="/")
            line = [part for part in done.stderr.decode().splitlines() if part.startswith("CPU ")]
            if not line:
                raise RuntimeError(f"{tree} ({launcher}) spawned nothing: {done.stderr.decode()[-500:]}")
            found.setdefault(f"{tree} ({launcher})", []).append(float(line[0].split()[1]))
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tree", action="append", type=Path, help="a checkout (default: this one)")
    parser.add_argument("--launcher", action="append", choices=("script", "console"),
                        help="script: the entry point first (the installed command); console: `re` first")
    parser.add_argument("--answers", action="store_true",
                        help="CPU to the early initialize answer and the listing from the snapshot (425 tools)")
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="first-spawn-") as tmp:
        wheel = from_wheel(Path(tmp))
        python = wheel.python
        config = Path(tmp) / "config.json"  # one upstream that ends at once: only its spawn matters
        config.write_text(json.dumps({"mcpServers": {"up": {"command": python, "args": ["-c", "pass"]}}}))
        for tree in args.tree or [REPO_ROOT]:  # the trees' bytecode, as pip writes it on install
            subprocess.run([python, "-m", "compileall", "-q", str(tree.resolve() / "sidecar")], capture_output=True)
        arms = [(str(tree.resolve()), launcher) for tree in args.tree or [REPO_ROOT]
                for launcher in args.launcher or ["script"]]
        if args.answers:
            previous = use(wheel)
            try:
                argv = upstream_argv(GITHUB)
            finally:
                use(previous)
            config.write_text(json.dumps({"mcpServers": {"gh": {"command": argv[0], "args": argv[1:]}}}))
            found = cpu_to_answers(python, [tree for tree, _ in arms], args.rounds, config)
            what = "the early initialize answer and the listing from the snapshot"
        else:
            found = cpu_to_first_spawn(python, arms, args.rounds, config)
            what = "the first spawn"
    print(f"CPU ms from the interpreter's start to {what}, {args.rounds} alternated starts each "
          f"(load average {os.getloadavg()[0]:.1f} at the end):")
    for name, values in found.items():
        q1, _, q3 = statistics.quantiles(values, n=4) if len(values) > 1 else values * 3
        print(f"  {statistics.median(values):6.1f}  [q1 {q1:.1f}, q3 {q3:.1f}, min {min(values):.1f}]  {name}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
