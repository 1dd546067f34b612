"""Hostile `query_result` calls against the real sidecar process: while the regression corpus
and generated queries run over a held 13 KB result, `ping` keeps being answered within
100 ms, every query ends with an answer (a result or a clear tool error), the process
keeps serving, and its peak RSS stays within 10 x the held payload plus 64 MB.

On a machine loaded past one runnable task per core (a shared CI box), the slowest pings
measure the scheduler, not the sidecar: then the 95th percentile must be within 100 ms
and the slowest within 1 s, and the test says so."""

from __future__ import annotations

import json
import os
import random
import time

import anyio
import pytest

from tests.gate.hostile_queries import REGRESSION, hostile
from tests.conftest import memory_kib

pytestmark = pytest.mark.e2e

GENERATED = 40
PING_EVERY = 0.02
PING_BUDGET = 0.100


async def test_hostile_queries_keep_ping_fast_and_memory_bounded(raw_sidecar, write_config, fault_server_entry) -> None:
    config = write_config({"f": fault_server_entry()}, budgets={"querySeconds": 2})
    rng = random.Random(1212)
    queries = [*REGRESSION, *(hostile(rng) for _ in range(GENERATED))]
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["f__records"])
        shaped = await sc.call("f__records", {"count": 170})
        view = json.loads(shaped["result"]["content"][0]["text"])
        payload_bytes = int(view["note"].split()[3].replace(",", ""))
        assert 12_000 < payload_bytes < 15_000
        await sc.call("query_result", {"handle": view["handle"], "query": "length(@)"})  # jmespath loaded
        baseline = memory_kib(sc.pid, "VmRSS")
        latencies: list[float] = []
        answers: list[dict] = []
        done = anyio.Event()

        async def ping() -> None:
            while not done.is_set():
                started = time.monotonic()
                assert "result" in await sc.request("ping", timeout=5)
                latencies.append(time.monotonic() - started)
                if latencies[-1] > 0.04:
                    print(f"slow ping {latencies[-1]*1000:.0f} ms during query {len(answers)}: {queries[min(len(answers), len(queries)-1)][:70]!r}")
                with anyio.move_on_after(PING_EVERY):
                    await done.wait()

        async def query() -> None:
            for expression in queries:
                answers.append(await sc.call("query_result", {"handle": view["handle"], "query": expression},
                                             timeout=30))
            done.set()

        async with anyio.create_task_group() as group:
            group.start_soon(ping)
            group.start_soon(query)
        peak = memory_kib(sc.pid, "VmHWM")
        assert all("result" in a for a in answers), [a for a in answers if "result" not in a][:2]
        texts = [a["result"]["content"][0]["text"] for a in answers]
        assert not [t for t in texts if "internal error" in t]
        assert (await sc.call("query_result", {"handle": view["handle"], "query": "[0].id"}))["result"]["content"][0]["text"] == "0"
        grown_mib = (peak - baseline) / 1024
        budget_mib = (10 * payload_bytes + (64 << 20)) / 2**20
        refused = sum(1 for a in answers if a["result"].get("isError"))
        print(f"{len(queries)} queries ({refused} refused), {len(latencies)} pings: max {max(latencies) * 1000:.1f} ms, "
              f"p50 {sorted(latencies)[len(latencies) // 2] * 1000:.1f} ms; RSS peak baseline + {grown_mib:.1f} MiB "
              f"(budget {budget_mib:.1f} MiB)")
        assert grown_mib <= budget_mib
        ordered = sorted(latencies)
        if os.getloadavg()[0] <= (os.cpu_count() or 1):
            assert ordered[-1] <= PING_BUDGET, ordered[-5:]
        else:  # other work holds the cores: the sidecar is not the one scheduled late
            print(f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores: the 95th percentile is checked")
            assert ordered[int(len(ordered) * 0.95)] <= PING_BUDGET and ordered[-1] <= 10 * PING_BUDGET, ordered[-5:]
