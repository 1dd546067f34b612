"""Bad input from the engine, through the real sidecar process: every bad frame gets the
right error, every valid call is answered right, and the process keeps serving."""

from __future__ import annotations

import json
import os
import random
from typing import Any

import anyio
import pytest

pytestmark = pytest.mark.e2e

# (line, expected code, id echoed in the error)
MALFORMED: list[tuple[bytes, int, Any]] = [
    (b"not json at all", -32700, None),
    (b'{"jsonrpc":"2.0","id":"trunc","method":"ping"', -32700, "trunc"),  # its head shows the id
    (b'{"jsonrpc":"2.0","id":"d","id":"e","method":"ping"}', -32700, None),
    (b'{"jsonrpc":"2.0","id":"n","method":"tools/call","params":{"name":"x","arguments":{"v":NaN}}}', -32700, "n"),
    (b'{"jsonrpc":"2.0","id":"i","method":"tools/call","params":{"arguments":{"v":-Infinity}}}', -32700, "i"),
    (b'{"jsonrpc":"2.0","id":"s","method":"ping","params":{"v":"\\udc00"}}', -32700, "s"),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":2.5,"method":"ping"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', -32600, None),
    (b"[]", -32600, None),
    (b"17", -32600, None),
    (b'{"jsonrpc":"2.0","id":"bad-version-1","method":"ping","jsonrpc2":1}', None, None),  # valid: extra key
    (b'{"jsonrpc":"3.0","id":"v","method":"ping"}', -32600, "v"),
    (b'{"jsonrpc":"2.0","id":"m","method":["tools/list"]}', -32600, "m"),
    (b'{"jsonrpc":"2.0","id":"p","method":"tools/list","params":[1,2]}', -32602, "p"),
    (b'{"jsonrpc":"2.0","id":"u","method":"no/such/method"}', -32601, "u"),
    (b'{"jsonrpc":"2.0","id":"t","method":"tools/call","params":{"name":5}}', -32602, "t"),
    (b'{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"f__echo","arguments":"x"}}', -32602, "a"),
    (b'{"jsonrpc":"2.0","id":"k","method":"tools/call","params":{"name":"nope__nothing"}}', -32602, "k"),
    (b'{"jsonrpc":"2.0","id":"c","method":"tools/list","params":{"cursor":"zzz"}}', -32602, "c"),
    (b'{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{"uri":"none://x"}}', -32002, "r"),
    (b'{"jsonrpc":"2.0","id":"g","method":"prompts/get","params":{"name":"missing"}}', -32602, "g"),
    (b'\xff\xfe{"jsonrpc":"2.0","id":"utf","method":"ping"}', -32700, "utf"),  # read from its tail
    (b'{"jsonrpc":"2.0","method":"notifications/unknown"}', None, None),  # notification: no answer
    (b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"never"}}', None, None),
    (b'{"jsonrpc":"2.0","id":"ghost","result":{}}', None, None),  # answer to nothing: dropped
    # Nesting past the depth limit (512), refused before any decoder recurses; a request's
    # id is echoed when the frame's first or last bytes show it.
    (b"[" * 1000, -32700, None),
    (b"[" * 3000 + b"]" * 3000, -32700, None),
    (b'{"a":' * 800 + b"1" + b"}" * 800, -32700, None),
    (b'{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"f__echo","arguments":{"v":'
     + b"[" * 2000 + b"]" * 2000 + b"}}}", -32700, "deep"),
    (b'{"jsonrpc":"2.0","method":"tools/call","params":{"name":"f__echo","arguments":{"v":'
     + b'[{"k":' * 700 + b"0" + b"}]" * 700 + b'}},"id":"tail"}', -32700, "tail"),
    (b'{"jsonrpc":"2.0","method":"notifications/x","params":{"v":' + b"[" * 900 + b"]" * 900 + b"}}", -32700, None),
    # Hostile but valid: answered. Brackets inside strings do not count; at the limit is fine.
    (b'{"jsonrpc":"2.0","id":"brackets","method":"ping","params":{"s":"' + b"[{" * 2000 + b'"}}', 0, "brackets"),
    (b'{"jsonrpc":"2.0","id":"escaped","method":"ping","params":{"s":"\\\\\\"' + b"[" * 900 + b'"}}', 0, "escaped"),
    (b'{"jsonrpc":"2.0","id":"at-limit","method":"ping","params":{"v":' + b"[" * 500 + b"]" * 500 + b"}}", 0, "at-limit"),
    (b'{"jsonrpc":"2.0","id":"raw-surrogate","method":"ping","params":{"s":"\xed\xa0\x80\xc0\xaf"}}', 0, "raw-surrogate"),
    (b'\xef\xbb\xbf{"jsonrpc":"2.0","id":"bom","method":"ping"}', -32700, "bom"),
    (b'{"jsonrpc":"2.0","id":"huge","method":"ping","params":{"n":1e400}}', -32700, "huge"),  # the envelope reads: id echoed
]
ANSWERED = 0  # the code of corpus lines that are valid requests, answered with a result


def _unique_id(line: bytes, n: int) -> bytes:
    for echo in {e for _, _, e in MALFORMED if isinstance(e, str)}:
        line = line.replace(b'"id":"%s"' % echo.encode(), b'"id":"%s-%d"' % (echo.encode(), n))
    return line


def _expected_errors(chosen: list[tuple[bytes, int, Any]]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for _, code, _ in chosen:
        if code:
            counts[code] = counts.get(code, 0) + 1
    return counts


# RELIABILITY R1: a CI-sized run by default; OMB_FUZZ_FRAMES=1000000 for the long run.
FRAMES = int(os.environ.get("OMB_FUZZ_FRAMES", "20000"))


async def test_malformed_frames_interleaved_with_valid_calls(raw_sidecar, write_config, fault_server_entry) -> None:
    config = write_config({"f": fault_server_entry()})
    rng = random.Random(7)
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["f__echo"])
        start = len(sc.frames)
        chosen = [rng.choice(MALFORMED) for _ in range(FRAMES)]
        valid_ids: list[int] = []
        batch = bytearray()
        for n, (line, _, _) in enumerate(chosen):
            # Requests in flight at once must have distinct ids, or they are refused as reused.
            batch += _unique_id(line, n) + b"\n"
            if n % 10 == 0:
                ident = 1_000_000 + n
                valid_ids.append(ident)
                call = {"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                        "params": {"name": "f__echo", "arguments": {"nonce": f"nonce-{ident}"}}}
                batch += json.dumps(call).encode() + b"\n"
            if len(batch) > 32_000:
                await sc.send_bytes(bytes(batch))
                batch.clear()
        await sc.send_bytes(bytes(batch))
        expected = _expected_errors(chosen)
        # "bad-version-1" is a valid ping (unknown top-level keys are allowed): one result each.
        valid_pings = sum(1 for line, code, _ in chosen if b"bad-version-1" in line or code == ANSWERED)
        total = sum(expected.values()) + len(valid_ids) + valid_pings
        with anyio.fail_after(60 + FRAMES / 200):
            while len(sc.frames) - start < total:
                await sc._changed.wait()
        frames = sc.frames[start:]
        answers = {f["id"]: f for f in frames if isinstance(f.get("id"), int) and f["id"] >= 1_000_000}
        assert sorted(answers) == valid_ids
        for ident, answer in answers.items():
            assert answer["result"]["content"][0]["text"] == f"nonce-{ident}"
        codes: dict[int, int] = {}
        for f in frames:
            if "error" in f:
                codes[f["error"]["code"]] = codes.get(f["error"]["code"], 0) + 1
        assert codes == expected
        assert (await sc.request("ping"))["result"] == {}
        assert "Traceback" not in sc.stderr


async def test_each_refusal_echoes_the_id_it_could_read(raw_sidecar, write_config, fault_server_entry) -> None:
    config = write_config({"f": fault_server_entry()})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["f__echo"])
        for line, code, echo in MALFORMED:
            if not code:
                continue
            mark = len(sc.frames)
            await sc.send_bytes(line + b"\n")
            answer = await sc.wait_for(lambda f: "error" in f, start=mark)
            assert (answer["error"]["code"], answer["id"]) == (code, echo), line


def _mutations(rng: random.Random, line: bytes) -> bytes:
    """A valid frame, damaged the ways transports and buggy clients damage them."""
    data = bytearray(line)
    for _ in range(rng.randint(1, 4)):
        how = rng.randrange(5)
        if not data:
            data = bytearray(b"{")
        spot = rng.randrange(len(data))
        if how == 0:
            data[spot] = rng.randrange(256)
        elif how == 1:
            del data[spot:spot + rng.randint(1, 8)]
        elif how == 2:
            data[spot:spot] = rng.choice([b"{", b"}", b'"', b",", b"\\", b"\\u", b"\xff", b"NaN", b"[", b"\x00"])
        elif how == 3:
            data = data[:spot]
        else:
            data[spot:spot] = data[: rng.randint(1, 20)]
    return bytes(data).replace(b"\n", b" ") or b"x"


async def test_fuzzed_frames_never_break_the_process(raw_sidecar, write_config, fault_server_entry) -> None:
    config = write_config({"f": fault_server_entry()})
    rng = random.Random(11)
    seeds = [json.dumps({"jsonrpc": "2.0", "id": n, "method": m, "params": p}).encode()
             for n, (m, p) in enumerate([("ping", {}), ("tools/list", {}), ("tools/call", {"name": "f__echo", "arguments": {"nonce": "z"}}),
                                          ("resources/list", {}), ("prompts/get", {"name": "f__x"})])]
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["f__echo"])
        canaries: list[int] = []
        batch = bytearray()
        for n in range(FRAMES // 2):
            batch += _mutations(rng, rng.choice(seeds)) + b"\n"
            if n % 50 == 0:
                ident = 5_000_000 + n
                canaries.append(ident)
                batch += json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                                     "params": {"name": "f__echo", "arguments": {"nonce": f"c{ident}"}}}).encode() + b"\n"
            if len(batch) > 32_000:
                await sc.send_bytes(bytes(batch))
                batch.clear()
        await sc.send_bytes(bytes(batch))
        for ident in canaries:
            answer = await sc.response(ident, timeout=60)
            assert answer["result"]["content"][0]["text"] == f"c{ident}"
        assert (await sc.request("ping", id="final-ping"))["result"] == {}
        assert "Traceback" not in sc.stderr and sc.process.returncode is None


async def test_cancel_reaches_the_upstream_within_100_ms_p99(raw_sidecar, write_config, fault_server_entry, tmp_path) -> None:
    """RELIABILITY R4: 200 cancels, timed from the engine's send to the upstream's receipt."""
    import time

    record = tmp_path / "events.jsonl"
    config = write_config({"f": fault_server_entry(f"record={record}")})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["f__sleep"])
        sent_at: list[float] = []
        for n in range(200):
            rid = await sc.send_request("tools/call", {"name": "f__sleep", "arguments": {"seconds": 30}}, id=f"c{n}")
            with anyio.fail_after(10):  # the upstream has the call (its own backlog is not ours to time)
                while sum('"recv"' in line and "tools/call" in line for line in record.read_text().splitlines()) <= n:
                    await anyio.sleep(0.001)
            sent_at.append(time.time())
            await sc.notify("notifications/cancelled", {"requestId": rid})
        with anyio.fail_after(20):
            while record.read_text().count('"cancelled"') < 200:
                await anyio.sleep(0.05)
        received = [json.loads(line)["t"] for line in record.read_text().splitlines() if '"cancelled"' in line]
        delays = sorted(r - s for r, s in zip(received, sent_at))
        p99 = delays[int(len(delays) * 0.99) - 1]
        print(f"cancel reached the upstream: p50 {delays[100] * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms")
        assert p99 < 0.1
        await sc.request("ping", id="after")
        assert not [f for f in sc.frames if isinstance(f.get("id"), str) and f["id"].startswith("c")]


async def test_nesting_to_100000_deep_is_refused_and_the_process_keeps_serving(raw_sidecar, write_config, fault_server_entry) -> None:
    """RELIABILITY R1 / rule 12: the depth limit holds however deep, and costs no traceback."""
    import time

    config = write_config({"f": fault_server_entry()})
    deep = b"[" * 100_000 + b"]" * 100_000
    frames = [
        deep,
        b"{" * 100_000,
        b'{"jsonrpc":"2.0","id":"very-deep","method":"tools/call","params":{"name":"f__echo","arguments":{"v":'
        + deep + b"}}}",
    ]
    async with raw_sidecar(config, "--log-level", "DEBUG") as sc:
        await sc.initialize()
        await sc.wait_for_tools(["f__echo"])
        for n, frame in enumerate(frames):
            mark = len(sc.frames)
            await sc.send_bytes(frame + b"\n")
            refused = await sc.wait_for(lambda f: "error" in f, start=mark)
            assert refused["error"]["code"] == -32700 and "512 levels" in refused["error"]["message"]
            started = time.monotonic()
            answer = await sc.call("f__echo", {"nonce": f"after-{n}"})
            assert answer["result"]["content"][0]["text"] == f"after-{n}"
            assert time.monotonic() - started < 1.0
        assert sc.responses_to("very-deep")[0]["error"]["code"] == -32700
        assert "Traceback" not in sc.stderr and "RecursionError" not in sc.stderr
        assert sc.process.returncode is None
