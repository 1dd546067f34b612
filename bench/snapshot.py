"""The cost of building the per-server facts snapshot (`sidecar.catalog.facts.facts_for`).

Owns one figure and its docs table (docs/gate.md): milliseconds to build the snapshot for
50 servers, each with an env secret (every encoded form of every secret is prepared for
redaction), median and fastest of 50 builds in this process. The snapshot is rebuilt only
when the mounted set changes, so this is a cost per mount, never per call.

    python -m bench.snapshot [--docs DIR]
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from typing import Any

from bench import doc_files

__all__ = ["measure", "render_docs"]

WRITER = "bench.snapshot"
SERVERS, BUILDS = 50, 50


def measure(servers: int = SERVERS, builds: int = BUILDS) -> dict[str, Any]:
    from sidecar.catalog.facts import facts_for
    from sidecar.config import parse_config

    entries = {f"s{i}": {"command": f"c{i}", "env": {"API_KEY": f"sk-{i:04d}-7Hq2x9PzR4mK8wT1"}, "resultChars": 1000 + i}
               for i in range(servers)}
    config = parse_config({"mcpServers": entries}, {})
    runs = []
    for _ in range(builds):
        started = time.perf_counter()
        facts_for(config, config.servers)
        runs.append((time.perf_counter() - started) * 1000)
    return {"servers": servers, "builds": builds, "median_ms": round(statistics.median(runs), 2),
            "fastest_ms": round(min(runs), 2)}


def render_docs(figures: dict[str, Any]) -> dict[str, str]:
    r = figures["result"]
    lines = doc_files.table(["building the snapshot", "median", "fastest"],
                            [[f"{r['servers']} servers, each with an env secret ({r['builds']} builds)",
                              f"{r['median_ms']} ms", f"{r['fastest_ms']} ms"]])
    return {"snapshot.md": doc_files.page(WRITER, lines, figures["measured"])}


def main(argv: list[str]) -> int:
    result = measure()
    print(json.dumps(result))
    if "--docs" in argv:
        for path in doc_files.publish(WRITER, "snapshot", result, argv):
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
