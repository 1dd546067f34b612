"""How long the operator's console pages take to serve, as the docs table.

Owns `docs/generated/console-pages.json` and `console-pages.md` (docs/console.md): it runs
`tests/console/measure_console.py` (a real sidecar with 41 configured servers and 200 calls
in the ring, 200 sequential GETs per page) in a child process, reads the line it prints
per page, and renders the figures.

    python -m bench.console_pages --docs DIR
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import Any

from bench import doc_files

__all__ = ["measure", "parse", "render_docs"]

WRITER = "bench.console_pages"
SCRIPT = doc_files.REPO / "tests" / "console" / "measure_console.py"
LINE = re.compile(r"^(?P<page>/\S+)\s+median\s+(?P<median>[\d.]+) ms\s+p95\s+(?P<p95>[\d.]+) ms\s+\((?P<setup>[^)]*)\)")


def parse(output: str) -> dict[str, Any]:
    """The per-page figures out of the script's output; the setup it names, once."""
    pages, setup = {}, ""
    for line in output.splitlines():
        if found := LINE.match(line.strip()):
            pages[found["page"]] = {"median_ms": float(found["median"]), "p95_ms": float(found["p95"])}
            setup = found["setup"]
    if not pages:
        raise RuntimeError(f"measure_console.py printed no page figures: {output[-400:]!r}")
    return {"pages": pages, "setup": setup}


def measure() -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(doc_files.REPO)}
    done = subprocess.run([sys.executable, str(SCRIPT)], cwd=doc_files.REPO, env=env, capture_output=True,
                          text=True, timeout=900, check=True)
    return parse(done.stdout)


def render_docs(figures: dict[str, Any]) -> dict[str, str]:
    result = figures["result"]
    rows = [[f"`{page}`", f"{row['median_ms']:.1f} ms", f"{row['p95_ms']:.1f} ms"] for page, row in result["pages"].items()]
    lines = [*doc_files.table(["page", "median", "p95"], rows), "", f"({result['setup']}.)"]
    return {"console-pages.md": doc_files.page(WRITER, lines, figures["measured"])}


def main(argv: list[str]) -> int:
    for path in doc_files.publish(WRITER, "console-pages", measure(), argv):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
