"""Measure the console: how long its pages take to serve, with many servers and a full
ring of calls, against a real sidecar (`python tests/console/measure_console.py`).

Prints one line per page: the median and 95th percentile of N sequential GETs, in ms.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

from tests.console.console_support import NOTES, ConsoleClient, McpCaller, open_console, write_config

SERVERS, CALLS, ROUNDS = 40, 200, 200


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        servers = {f"parked{i}": {"command": sys.executable, "args": [str(NOTES)], "env": {"N": f"value-{i}-xyzzy"},
                                  "enabled": False} for i in range(SERVERS)}
        servers["notes"] = {"command": sys.executable, "args": [str(NOTES)]}
        async with open_console(write_config(tmp, servers), tmp) as sidecar:
            client, engine = ConsoleClient(sidecar.base), McpCaller(sidecar)
            try:
                await client.login()
                await engine.open()
                await engine.wait_for_tool("notes__search_notes")
                for _ in range(CALLS):
                    await engine.call("notes__search_notes", {"query": "milk"})
                for path in ("/console/servers", "/console/calls", "/console/held", "/console/calls.json"):
                    took = []
                    for _ in range(ROUNDS):
                        start = time.perf_counter()
                        status, _ = await client.get(path)
                        took.append((time.perf_counter() - start) * 1000)
                        assert status == 200
                    took.sort()
                    print(f"{path:22} median {statistics.median(took):6.2f} ms  p95 {took[int(len(took) * 0.95)]:6.2f} ms"
                          f"  ({SERVERS + 1} servers, {CALLS} calls in the ring, {ROUNDS} GETs)")
            finally:
                await client.close()
                await engine.close()


if __name__ == "__main__":
    anyio.run(main)
