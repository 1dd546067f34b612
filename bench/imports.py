"""The runtime's import time, read from `python -X importtime` (the sum of every module's
own time; the minimum over repeats, as a loaded machine only ever adds).

  interpreter_ms   `python -c pass`: the interpreter and site alone
  direct_ms        what the fast upstream loads (msgspec, argparse, pathlib): direct's floor
  early_answer_ms  what the sidecar loads before it answers a waiting `initialize` on a
                   plain `--config PATH` start: the entry's early start and greeting, and
                   `sidecar.stdin_ahead` (the standard library's answer)
  cli_answer_ms    what it loads before the CLI answers one the entry point left (the CLI,
                   the config, the mount plan, `sidecar.wire.hello`)
  runtime_ms       everything the stdio sidecar loads before it serves (`sidecar.app`, asyncio
                   and uvloop loaded as a stdio start over stdio servers loads them: without
                   OpenSSL, `sidecar.loop`)
  loop_floor_ms    what the stdio runtime loads that is not the sidecar's: the interpreter,
                   msgspec, asyncio and uvloop, each loaded as the runtime loads it (lean,
                   `sidecar.lean_libraries`; without OpenSSL, `sidecar.loop`); runtime_ms
                   less this is the sidecar's own modules

    python -m bench.imports
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

from bench.candidates import REPO_ROOT, compile_sidecar

__all__ = ["time_imports"]

SETS = {
    "interpreter_ms": "pass",
    "direct_ms": "import argparse, pathlib, msgspec",
    "early_answer_ms": "import sidecar.upstream.plain_config, sidecar.upstream.greeting, sidecar.stdin_ahead",
    "cli_answer_ms": ("import sidecar.upstream.plain_config, sidecar.upstream.greeting, sidecar.stdin_ahead, "
                      "sidecar.cli, sidecar.mounts.plan, sidecar.mounts.reach, sidecar.upstream.spawn, sidecar.wire.hello"),
    "runtime_ms": ("import sidecar.upstream.plain_config, sidecar.upstream.greeting, sidecar.cli, "
                   "sidecar.mounts.plan, sidecar.mounts.reach, sidecar.upstream.spawn, sidecar.wire.hello, "
                   "sidecar.mounts.health, sidecar.upstream.oauth.where, sidecar.collector, sidecar.loop; "
                   "sidecar.loop.loop_libraries_without_openssl(); import sidecar.app, uvloop"),
    "loop_floor_ms": ("import sidecar.lean_libraries, sidecar.loop; sidecar.lean_libraries.load_libraries_lean(); "
                      "sidecar.loop.loop_libraries_without_openssl(); import uvloop"),
}
_LINE = re.compile(r"import time:\s+(\d+) \|")


def _own_total_ms(code: str) -> float:
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True,
                         cwd=str(REPO_ROOT), check=True).stderr
    return sum(int(m[1]) for m in map(_LINE.match, err.splitlines()) if m) / 1e3


def time_imports(repeats: int = 5) -> dict[str, float | str]:
    """Each set's import time in ms (minimum over `repeats`, at least 3); {"error": ...}
    when it cannot run."""
    try:
        return _figures(repeats)
    except (OSError, subprocess.CalledProcessError) as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}


def _figures(repeats: int) -> dict[str, float | str]:
    return {name: round(min(_own_total_ms(code) for _ in range(max(repeats, 3))), 1) for name, code in SETS.items()}


if __name__ == "__main__":
    compile_sidecar()  # as installed: a stale bytecode cache would time the compiler, not the imports
    print(json.dumps(time_imports(), indent=1))
