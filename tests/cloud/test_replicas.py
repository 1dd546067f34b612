"""Replicas that share held results through a real Redis, behind a real HAProxy: stateless
clients get shaped results from one replica and query them on another; a handle stays
bound to its owner; with Redis killed mid-run, calls that need it fail clearly and the
others keep working; 2025 sessions need the balancer to hash on the bearer."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import aiohttp
import pytest

from tests.cloud.cloud_support import (
    Client,
    fault_entry,
    handle_in,
    open_haproxy,
    open_redis,
    stateless_call,
    text_of,
    write_config,
)
from tests.http.http_support import TOKEN, HttpSidecar, open_http_sidecar

pytestmark = pytest.mark.timeout(150)
OTHER_TOKEN = "another-callers-token-0123456789"
STORE_PASSWORD = "store-password-canary-4b2d"


def replica_config(tmp_path: Path, redis_port: int) -> Path:
    url = f"redis://:{STORE_PASSWORD}@127.0.0.1:{redis_port}/0"
    return write_config(tmp_path, {"alpha": fault_entry()}, budgets={"resultChars": 2000},
                        store={"url": url, "timeoutSeconds": 2})


@asynccontextmanager
async def replicas(tmp_path: Path, config: Path, count: int = 2) -> AsyncIterator[list[HttpSidecar]]:
    async with AsyncExitStack() as stack:
        started = [await stack.enter_async_context(open_http_sidecar(config, tmp_path))
                   for _ in range(count)]
        yield started


async def query(http: aiohttp.ClientSession, base: str, handle: str, token: str = TOKEN) -> str:
    answer = await stateless_call(http, base, token, "query_result", {"handle": handle, "query": "length(@)"})
    if "error" in answer:
        return "error: " + answer["error"]["message"]
    return text_of(answer)


async def test_a_handle_made_on_one_replica_is_queried_on_another(tmp_path: Path) -> None:
    async with open_redis(tmp_path, password=STORE_PASSWORD) as (redis_port, redis), aiohttp.ClientSession() as http:
        config = replica_config(tmp_path, redis_port)
        async with replicas(tmp_path, config) as (one, two), open_haproxy(tmp_path, [one.port, two.port]) as lb_port:
            lb = f"http://127.0.0.1:{lb_port}"
            shaped = await stateless_call(http, lb, TOKEN, "alpha__records", {"count": 300})
            handle = handle_in(shaped)
            for base in (one.base, two.base, lb, lb):  # each replica, and both again through the balancer
                assert await query(http, base, handle) == "300"

            for round_ in range(6):  # made on whichever replica, read on the others
                made = handle_in(await stateless_call(http, lb, TOKEN, "alpha__records", {"count": 100 + round_}))
                assert {await query(http, b, made) for b in (one.base, two.base)} == {str(100 + round_)}

            async with open_http_sidecar(config, tmp_path, token=OTHER_TOKEN) as stranger:
                foreign = await query(http, stranger.base, handle, OTHER_TOKEN)
                assert "no held result has the handle" in foreign  # bound to its owner: looks missing

            os.killpg(redis.pid, signal.SIGKILL)  # the store goes away mid-run
            await redis.wait()
            down = await stateless_call(http, lb, TOKEN, "alpha__records", {"count": 300})
            assert "could not be held" in text_of(down) and "h_" not in json.dumps(down)
            assert (await query(http, lb, handle)).startswith("error: the shared result store did not answer")
            for nonce in range(4):  # calls that need no store go on, on both replicas
                echoed = await stateless_call(http, lb, TOKEN, "alpha__echo", {"nonce": str(nonce)})
                assert echoed["result"]["structuredContent"]["nonce"] == str(nonce)

            async with open_redis(tmp_path, redis_port, STORE_PASSWORD):  # back (empty: this Redis keeps nothing on disk)
                assert "no held result" in await query(http, lb, handle)
                again = handle_in(await stateless_call(http, lb, TOKEN, "alpha__records", {"count": 50}))
                assert {await query(http, b, again) for b in (one.base, two.base)} == {"50"}
        for sidecar in (one, two):
            assert STORE_PASSWORD not in sidecar.stderr and "redis://" not in sidecar.stderr


async def test_sessions_need_the_balancer_to_hash_on_the_bearer(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"alpha": fault_entry()}, budgets={"resultChars": 2000})
    async with replicas(tmp_path, config) as (one, two), aiohttp.ClientSession() as http:
        async with open_haproxy(tmp_path, [one.port, two.port], balance="roundrobin") as port:
            client = Client(f"http://127.0.0.1:{port}", TOKEN, http)
            await client.initialize()  # initialize on one replica, initialized on the other
            body = {"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {}}
            sent = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream", "Mcp-Session-Id": client.session_id or ""}
            statuses = set()
            for _ in range(4):
                async with http.post(client.url, json=body, headers=sent) as response:
                    statuses.add(response.status)
            assert 404 in statuses  # round robin sends a session to a replica that never saw it

        async with open_haproxy(tmp_path, [one.port, two.port], balance="hdr(Authorization)") as port:
            client = Client(f"http://127.0.0.1:{port}", TOKEN, http)
            await client.initialize()
            shaped = await client.call("alpha__records", {"count": 300})
            handle = handle_in(shaped)
            for _ in range(6):  # every request of the bearer lands on the replica holding the session
                answer = await client.call("query_result", {"handle": handle, "query": "length(@)"})
                assert text_of(answer) == "300"
