"""What a held question costs a 2026-07-28 engine, as the docs table.

Owns `docs/generated/eras-rounds.json` and `eras-rounds.md` (docs/benchmarks.md): it runs
`tests/eras/measure_rounds.py` in a child process (a real sidecar serving HTTP on
loopback, one session-era SDK server on stdio, `tests/eras/era_server.py`), reads the
lines it prints and renders them: the median time of a stateless call that asks nothing
(one round) and of one whose server asks once (two rounds), and the sidecar's resident
memory before and after many questions are held at once.

    python -m bench.eras_rounds [--calls 40] [--held 60] [--docs DIR]
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Any

from bench import doc_files

__all__ = ["measure", "parse", "render_docs"]

WRITER = "bench.eras_rounds"
SCRIPT = doc_files.REPO / "tests" / "eras" / "measure_rounds.py"
CALLS, HELD = 40, 60
TIMED = re.compile(r"^call that asks (?P<what>nothing|once) \((?P<rounds>\d+) rounds?\): "
                   r"median (?P<median>[\d.]+) ms over (?P<calls>\d+) calls$")
HELD_LINE = re.compile(r"^(?P<held>\d+) questions held at once: sidecar RSS (?P<before>\d+) -> (?P<after>\d+) KiB")


def parse(output: str) -> dict[str, Any]:
    """The figures out of the script's output: one per timed kind of call, and the memory."""
    calls: dict[str, Any] = {}
    memory: dict[str, int] = {}
    for line in output.splitlines():
        if timed := TIMED.match(line.strip()):
            calls[timed["what"]] = {"rounds": int(timed["rounds"]), "median_ms": float(timed["median"]),
                                    "calls": int(timed["calls"])}
        elif held := HELD_LINE.match(line.strip()):
            memory = {"held": int(held["held"]), "before_kib": int(held["before"]), "after_kib": int(held["after"])}
    if set(calls) != {"nothing", "once"} or not memory:
        raise RuntimeError(f"measure_rounds.py did not print every figure: {output[-400:]!r}")
    return {"calls": calls, "memory": memory}


def measure(calls: int = CALLS, held: int = HELD) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(doc_files.REPO)}
    done = subprocess.run([sys.executable, str(SCRIPT), "--calls", str(calls), "--held", str(held)],
                          cwd=doc_files.REPO, env=env, capture_output=True, text=True, timeout=600, check=True)
    return parse(done.stdout)


def render_docs(figures: dict[str, Any]) -> dict[str, str]:
    calls, memory = figures["result"]["calls"], figures["result"]["memory"]
    rows = [[f"a call whose server asks {'nothing' if what == 'nothing' else 'once'} ({row['rounds']} "
             f"round{'s' if row['rounds'] > 1 else ''}), median of {row['calls']}", f"{row['median_ms']:.1f} ms"]
            for what, row in sorted(calls.items(), key=lambda item: item[1]["rounds"])]
    grown = memory["after_kib"] - memory["before_kib"]
    rows.append([f"the sidecar's RSS with {memory['held']} questions held at once",
                 f"{memory['before_kib']:,} -> {memory['after_kib']:,} KiB ({grown / memory['held']:.1f} KiB each)"])
    lines = doc_files.table(["a 2026-07-28 engine, a session-era server on stdio", "figure"], rows)
    return {"eras-rounds.md": doc_files.page(WRITER, lines, figures["measured"])}


def _option(argv: list[str], name: str, default: int) -> int:
    return int(argv[argv.index(name) + 1]) if name in argv else default


def main(argv: list[str]) -> int:
    result = measure(_option(argv, "--calls", CALLS), _option(argv, "--held", HELD))
    print(json.dumps(result))
    if "--docs" in argv:
        for path in doc_files.publish(WRITER, "eras-rounds", result, argv):
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
