"""Hostile answers from URL upstreams (Streamable HTTP as one JSON body or an event
stream, and legacy SSE), through the real sidecar process: too deep or over the
upstream's size cap, every call still ends with exactly one answer naming the limit."""

from __future__ import annotations

import random
import re
from typing import Any

import anyio
import pytest
from hostile_http import serve_hostile
from test_hostile_answers import text_of

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

CAP = 65_536


def cases(rng: random.Random, count: int) -> list[tuple[list[str], str]]:
    found: list[tuple[list[str], str]] = []
    for _ in range(count):
        if rng.random() < 0.5:
            depth = rng.choice([513, 2_000, 20_000])
            body = "[" * depth + "]" * depth
            lines = rng.choice(['{"jsonrpc":"2.0","id":{id},"result":{"x":%s}}',
                                '{"jsonrpc":"2.0","result":{"x":%s},"id":{id}}'])
            found.append(([lines % body], "nested deeper than 512 levels"))
        else:
            pad = "p" * rng.randint(CAP + 1, 3 * CAP)
            lines = rng.choice(['{"jsonrpc":"2.0","id":{id},"result":{"content":[{"type":"text","text":"%s"}]}}',
                                '{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"%s"}]},"id":{id}}'])
            found.append(([lines % pad], f"{CAP}"))
    return found


@pytest.mark.parametrize("transport", ["http-json", "http-stream", "sse"])
async def test_url_answers_too_deep_or_too_big_end_their_call(raw_sidecar, write_config, transport: str) -> None:
    rng = random.Random(transport)
    async with serve_hostile() as server:
        url = server.sse_url if transport == "sse" else server.http_url
        entry: dict[str, Any] = {"type": "sse" if transport == "sse" else "http", "url": url,
                                 "maxMessageBytes": CAP, "startTimeoutSeconds": 10}
        config = write_config({"w": entry})
        async with raw_sidecar(config) as sc:
            await sc.initialize()
            await sc.wait_for_tools(["w__say"])
            for n, (lines, expected) in enumerate(cases(rng, 16)):
                with anyio.fail_after(15):
                    answer = await sc.call("w__say", {"lines": lines, "stream": transport == "http-stream"})
                assert expected in text_of(answer), (transport, n, text_of(answer)[:300])
                if expected == f"{CAP}":  # the size is named too (the id is a small integer)
                    sizes = [int(n) for n in re.findall(r"\d+", text_of(answer))]
                    assert any(len(lines[0]) - 4 <= n <= len(lines[0]) + 4 for n in sizes), text_of(answer)
                canary = await sc.call("w__echo", {"nonce": f"c{n}"})
                assert text_of(canary) == f"c{n}"
            assert "Traceback" not in sc.stderr and "RecursionError" not in sc.stderr


async def test_a_too_deep_error_body_still_ends_its_call(raw_sidecar, write_config) -> None:
    async with serve_hostile() as server:
        config = write_config({"w": {"type": "http", "url": server.http_url, "startTimeoutSeconds": 10}})
        async with raw_sidecar(config) as sc:
            await sc.initialize()
            await sc.wait_for_tools(["w__say"])
            for depth in (513, 5_000, 100_000):
                body = '{"jsonrpc":"2.0","id":{id},"error":{"code":-1,"message":"m","data":%s}}' % ("[" * depth + "]" * depth)
                with anyio.fail_after(15):
                    answer = await sc.call("w__say", {"lines": [body], "status": 500})
                assert "answered HTTP 500" in text_of(answer)
            assert (await sc.call("w__echo", {"nonce": "after"}))["result"]["content"][0]["text"] == "after"
            assert "Traceback" not in sc.stderr and "RecursionError" not in sc.stderr
