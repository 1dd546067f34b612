"""Measures what a held question costs a 2026-07-28 engine: the time of a call whose
session-era upstream asks once (two rounds), next to a call that asks nothing (one round),
and the sidecar's resident memory with many questions held at once.

    PYTHONPATH=$PWD .venv/bin/python tests/eras/measure_rounds.py [--calls 40] [--held 60]

Prints one line per figure. Real processes: the sidecar's HTTP front, tests/eras/era_server.py.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.conftest import memory_kib  # noqa: E402
from tests.eras.eras_support import era_entry, stateless_call, wait_for_tools  # noqa: E402
from tests.http.http_support import open_http_sidecar  # noqa: E402

ANSWER = {"upstream": {"action": "accept", "content": {"name": "m"}}}


async def timed(http: aiohttp.ClientSession, sc: object, asks: bool) -> float:
    url, token = sc.url, sc.token  # type: ignore[attr-defined]
    start = time.perf_counter()
    if asks:
        _, asked = await stateless_call(http, url, token, "era__form", {})
        await stateless_call(http, url, token, "era__form", {}, state=asked["result"]["requestState"],
                             responses=ANSWER)
    else:
        await stateless_call(http, url, token, "era__echo", {"nonce": "x"})
    return (time.perf_counter() - start) * 1000


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--held", type=int, default=60)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "c.json"
        config.write_text(json.dumps({"bot": {"id": "m", "engine": "claude", "selection": None},
                                      "mcpServers": {"era": era_entry()}}))
        async with open_http_sidecar(config, Path(tmp), log_level="WARNING") as sc, aiohttp.ClientSession() as http:
            await wait_for_tools(http, sc.url, sc.token)
            for asks in (False, True):
                await timed(http, sc, asks)  # warm
                times = [await timed(http, sc, asks) for _ in range(options.calls)]
                label = "asks once (2 rounds)" if asks else "asks nothing (1 round)"
                print(f"call that {label}: median {statistics.median(times):.1f} ms over {options.calls} calls")
            before = memory_kib(sc.process.pid, "VmRSS")
            for _ in range(options.held):
                await stateless_call(http, sc.url, sc.token, "era__form", {})
            after = memory_kib(sc.process.pid, "VmRSS")
            print(f"{options.held} questions held at once: sidecar RSS {before} -> {after} KiB "
                  f"({(after - before) / options.held:.1f} KiB each)")


if __name__ == "__main__":
    asyncio.run(main())
