"""Every request with a readable id gets exactly one answer with that id (issue 22, class 11;
RELIABILITY rule 4), on stdio, with the real process: calls in flight at SIGTERM, SIGINT or
the end of stdin each get an error naming the shutdown before the process exits, and a
signal's exit code says it was signalled (128 + its number); a line over the 64 MiB cap
gets an error under the id its head or tail shows, and the lines after it are served."""

from __future__ import annotations

import signal
import time
from typing import Any

import anyio
import pytest

from sidecar.front.stdio import ENGINE_LINE_CAP

pytestmark = pytest.mark.e2e


async def _calls_in_flight(sc: Any, count: int) -> list[str]:
    ids = [f"slow-{n}" for n in range(count)]
    for ident in ids:
        await sc.send_request("tools/call", {"name": "f__sleep", "arguments": {"seconds": 60}}, id=ident)
    await sc.request("ping", id="read-up-to-here")  # lines are read in order: every call is in flight now
    return ids


async def _exit_code(sc: Any) -> int:
    with anyio.fail_after(20):
        code: int = await sc.process.wait()
    return code


@pytest.mark.parametrize(("sig", "name"), [(signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "SIGINT")])
async def test_a_signal_answers_every_call_in_flight_then_exits_saying_so(raw_sidecar, write_config,
                                                                           fault_server_entry, sig: int,
                                                                           name: str) -> None:
    config = write_config({"f": fault_server_entry()})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["f__sleep"])
        ids = await _calls_in_flight(sc, 3)
        started = time.monotonic()
        sc.process.send_signal(sig)
        assert await _exit_code(sc) == 128 + sig
        print(f"{name} to exit, 3 calls in flight answered: {(time.monotonic() - started) * 1000:.0f} ms")
        for ident in ids:
            answers = sc.responses_to(ident)
            assert len(answers) == 1, answers
            assert "shutting down" in answers[0]["error"]["message"] and name in answers[0]["error"]["message"]
        assert "Traceback" not in sc.stderr


async def test_the_end_of_stdin_answers_every_call_in_flight_and_exits_cleanly(raw_sidecar, write_config,
                                                                                 fault_server_entry) -> None:
    config = write_config({"f": fault_server_entry()})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["f__sleep"])
        ids = await _calls_in_flight(sc, 2)
        await sc.close_stdin()
        assert await _exit_code(sc) == 0
        for ident in ids:
            [answer] = sc.responses_to(ident)
            assert "closed stdin" in answer["error"]["message"]


async def test_the_end_of_stdin_lets_a_short_call_in_flight_finish(raw_sidecar, write_config,
                                                                   fault_server_entry) -> None:
    """A script that pipes its requests in and closes stdin gets its real answers: calls in
    flight may finish within the settle bound before the shutdown error is given."""
    config = write_config({"f": fault_server_entry()})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["f__sleep"])
        await sc.send_request("tools/call", {"name": "f__sleep", "arguments": {"seconds": 0.5}}, id="short")
        await sc.request("ping", id="read-up-to-here")
        await sc.close_stdin()
        assert await _exit_code(sc) == 0
        [answer] = sc.responses_to("short")
        assert "result" in answer, answer


def _oversized(head: bytes, tail: bytes) -> bytes:
    filler = b"x" * (ENGINE_LINE_CAP + 1024)
    return head + filler + tail + b"\n"


async def test_a_line_over_the_cap_is_answered_by_the_id_it_shows(raw_sidecar, write_config,
                                                                  fault_server_entry) -> None:
    config = write_config({"f": fault_server_entry()})
    lines = {
        "big-head": _oversized(b'{"jsonrpc":"2.0","id":"big-head","method":"tools/call","params":'
                               b'{"name":"f__echo","arguments":{"v":"', b'"}}}'),
        "big-tail": _oversized(b'{"jsonrpc":"2.0","method":"tools/call","params":{"name":"f__echo","arguments":{"v":"',
                               b'"}},"id":"big-tail"}'),
    }
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["f__echo"])
        for ident, line in lines.items():
            await sc.send_bytes(line)
            answer = await sc.response(ident, timeout=60)
            assert answer["error"]["code"] == -32600 and "not read" in answer["error"]["message"]
            assert f"{ENGINE_LINE_CAP}-byte line cap" in answer["error"]["message"]
            echoed = await sc.call("f__echo", {"nonce": f"after-{ident}"})
            assert echoed["result"]["content"][0]["text"] == f"after-{ident}"
        assert len(sc.responses_to("big-head")) == len(sc.responses_to("big-tail")) == 1
        assert sc.process.returncode is None


async def test_a_last_request_without_its_newline_is_answered(raw_sidecar, write_config, fault_server_entry) -> None:
    config = write_config({"f": fault_server_entry()})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.send_bytes(b'{"jsonrpc":"2.0","id":"last","method":"ping"}')
        await sc.close_stdin()
        assert await _exit_code(sc) == 0
        assert [answer.get("result") for answer in sc.responses_to("last")] == [{}]
