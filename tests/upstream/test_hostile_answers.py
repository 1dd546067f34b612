"""Hostile answers from a stdio upstream, through the real sidecar process: frames nested
past the depth limit and lines over the upstream's size cap. Every call sent upstream
ends with exactly one answer, naming the limit; the sidecar keeps serving; nothing is
logged as a traceback. An upstream that is restarting answers as restarting.
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

HOSTILE = Path(__file__).resolve().parents[1] / "upstreams" / "hostile_server.py"
CAP = 65_536  # the upstream's maxMessageBytes in these tests


def hostile_entry(*options: str, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(HOSTILE), *options], **extra}


def text_of(answer: dict[str, Any]) -> str:
    if "error" in answer:
        return str(answer["error"]["message"])
    return " ".join(c.get("text", "") for c in answer["result"].get("content", []))


def _nested(rng: random.Random, depth: int) -> str:
    opener, closer = rng.choice([("[", "]"), ('{"k":', "}"), ('[{"a":1,"b":', "}]")])
    return opener * depth + "0" + closer * depth


def deep_answers(rng: random.Random, count: int) -> list[tuple[list[str], str]]:
    """(lines the upstream writes, what the call must answer) for `count` instances."""
    cases: list[tuple[list[str], str]] = []
    for _ in range(count):
        body = _nested(rng, rng.choice([513, 600, 1_000, 5_000, 50_000]))
        shape = rng.randrange(4)
        if shape == 0:  # the id first
            lines = ['{"jsonrpc":"2.0","id":{id},"result":{"content":[],"x":%s}}' % body]
        elif shape == 1:  # the id after the deep part
            lines = ['{"jsonrpc":"2.0","result":{"x":%s},"id":{id}}' % body]
        elif shape == 2:  # the id after it, other scalars after the id
            lines = ['{"result":{"x":%s},"id":{id},"jsonrpc":"2.0"}' % body]
        else:  # a deep notification first: dropped; the real answer follows
            note = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%s}}' % body
            lines = [note, '{"jsonrpc":"2.0","id":{id},"result":{"content":[{"type":"text","text":"fine"}]}}']
            cases.append((lines, "fine"))
            continue
        cases.append((lines, "nested deeper than 512 levels"))
    return cases


def big_answers(rng: random.Random, count: int) -> list[tuple[list[str], str]]:
    cases: list[tuple[list[str], str]] = []
    for _ in range(count):
        size = rng.randint(CAP + 1, 4 * CAP)
        pad = "x" * size
        shape = rng.randrange(5)
        if shape == 0:
            line = '{"jsonrpc":"2.0","id":{id},"result":{"content":[{"type":"text","text":"%s"}]}}' % pad
        elif shape == 1:  # the id comes after the result
            line = '{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"%s"}]},"id":{id}}' % pad
        elif shape == 2:  # no id anywhere near the edges: the call in flight fails all the same
            line = '{"jsonrpc":"2.0","result":{"a":"%s","id":{id},"b":"%s"}}' % (pad, pad)
        elif shape == 3:  # an oversized notification, then the real answer
            note = '{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"%s"}}' % pad
            cases.append(([note, '{"jsonrpc":"2.0","id":{id},"result":{"content":[{"type":"text","text":"fine"}]}}'],
                          "fine"))
            continue
        else:  # an oversized request from the upstream, then the real answer
            asked = '{"jsonrpc":"2.0","id":"up-1","method":"sampling/createMessage","params":{"p":"%s"}}' % pad
            cases.append(([asked, '{"jsonrpc":"2.0","id":{id},"result":{"content":[{"type":"text","text":"fine"}]}}'],
                          "fine"))
            continue
        expected = f"over the {CAP}-byte line cap"
        cases.append(([line], expected))
    return cases


async def _run_cases(sc: Any, cases: list[tuple[list[str], str]]) -> None:
    for n, (lines, expected) in enumerate(cases):
        with anyio.fail_after(10):
            answer = await sc.call("h__say", {"lines": lines})
        assert expected in text_of(answer), (n, text_of(answer)[:300])
        if expected != "fine":
            assert answer["result"]["isError"] is True
        canary = await sc.call("h__echo", {"nonce": f"canary-{n}"})
        assert text_of(canary) == f"canary-{n}"


async def test_every_call_whose_answer_is_too_deep_ends_once(raw_sidecar, write_config) -> None:
    config = write_config({"h": hostile_entry()})
    rng = random.Random(12)
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["h__say"])
        await _run_cases(sc, deep_answers(rng, 40))
        ids = [f["id"] for f in sc.frames if isinstance(f, dict) and "id" in f and "method" not in f]
        assert len(ids) == len(set(map(str, ids)))  # exactly one answer per id
        assert "Traceback" not in sc.stderr and "RecursionError" not in sc.stderr
        assert "nested deeper than 512 levels" in sc.stderr  # logged, with the real reason


async def test_every_call_whose_answer_is_over_the_cap_ends_once_naming_size_and_cap(raw_sidecar, write_config) -> None:
    config = write_config({"h": hostile_entry(maxMessageBytes=CAP)})
    rng = random.Random(4)
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["h__say"])
        cases = big_answers(rng, 30)
        await _run_cases(sc, cases)
        assert f"-byte line cap" in sc.stderr  # logged, with the size and the cap
        assert "Traceback" not in sc.stderr


async def test_the_size_named_is_the_lines_own(raw_sidecar, write_config) -> None:
    config = write_config({"h": hostile_entry(maxMessageBytes=CAP)})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["h__say"])
        for pad in (CAP, 200_000, 3_000_000):
            line = '{"jsonrpc":"2.0","id":{id},"result":{"content":[{"type":"text","text":"%s"}]}}' % ("y" * pad)
            words = text_of(await sc.call("h__say", {"lines": [line]}))
            found = re.search(r"\((\d+) bytes, over the (\d+)-byte line cap\)", words)
            assert found is not None, words
            # the upstream's own id replaced `{id}`: a small integer of 1 to 3 digits
            assert len(line) - 4 + 1 <= int(found.group(1)) <= len(line) - 4 + 3
            assert int(found.group(2)) == CAP


async def test_calls_in_flight_alongside_a_dropped_answer_get_their_own(raw_sidecar, write_config) -> None:
    config = write_config({"h": hostile_entry(maxMessageBytes=CAP)})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["h__say"])
        big = '{"jsonrpc":"2.0","id":{id},"result":{"content":[{"type":"text","text":"%s"}]}}' % ("z" * (2 * CAP))
        ids = []
        for n in range(20):
            ids.append(await sc.send_request("tools/call", {"name": "h__say", "arguments": {"lines": [big]}}))
            ids.append(await sc.send_request("tools/call", {"name": "h__echo", "arguments": {"nonce": f"n{n}"}}))
        answers = [await sc.response(i, timeout=20) for i in ids]
        for n in range(20):
            assert "line cap" in text_of(answers[2 * n])
            assert text_of(answers[2 * n + 1]) == f"n{n}"
        assert all(len(sc.responses_to(i)) == 1 for i in ids)
