"""Upstream faults through the real sidecar process: garbage, crashes, hangs, EPIPE,
shutdown. Each test starts `python -m sidecar` with scripted fault upstreams."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import Any

import anyio
import pytest

pytestmark = pytest.mark.e2e


def text_of(response: dict[str, Any]) -> str:
    return "".join(c.get("text", "") for c in response["result"]["content"])


async def test_garbage_and_stray_answers_from_an_upstream_are_skipped(raw_sidecar, write_config, fault_server_entry) -> None:
    config = write_config({"g": fault_server_entry("garbage=3", "unknown-ids", "duplicate", "garbage-on-start=5")})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["g__echo"])
        for n in range(20):
            response = await sc.call("g__echo", {"nonce": f"n{n}"})
            assert text_of(response) == f"n{n}"
        rid = await sc.send_request("tools/call", {"name": "g__echo", "arguments": {"nonce": "once"}})
        await sc.response(rid)
        await sc.request("ping")
        assert len(sc.responses_to(rid)) == 1


async def test_giant_non_json_lines_do_not_break_the_connection(raw_sidecar, write_config, fault_server_entry) -> None:
    config = write_config({"g": fault_server_entry("giant=3000000")})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["g__echo"])
        assert text_of(await sc.call("g__echo", {"nonce": "after-giant"})) == "after-giant"


async def test_kill_9_fails_in_flight_calls_fast_and_the_upstream_comes_back(
    raw_sidecar, write_config, fault_server_entry
) -> None:
    config = write_config({"a": fault_server_entry("name=a"), "b": fault_server_entry("name=b")})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["a__pid", "b__echo"])
        victim = int(text_of(await sc.call("a__pid")))
        hung = [await sc.send_request("tools/call", {"name": "a__sleep", "arguments": {"seconds": 30}}) for _ in range(5)]
        other = [await sc.send_request("tools/call", {"name": "b__sleep", "arguments": {"seconds": 0.5, "nonce": f"b{i}"}}) for i in range(5)]
        await sc.request("ping")
        killed_at = time.monotonic()
        os.kill(victim, signal.SIGKILL)
        for rid in hung:
            response = await sc.response(rid, timeout=5)
            assert time.monotonic() - killed_at < 2
            assert response["result"]["isError"] is True
            assert "upstream 'a' stopped" in text_of(response)
        for i, rid in enumerate(other):
            assert text_of(await sc.response(rid)).endswith(f" b{i}")
        with anyio.fail_after(5):
            while True:
                response = await sc.call("a__echo", {"nonce": "back"})
                if "result" in response and not response["result"].get("isError"):
                    break
                await anyio.sleep(0.05)
        assert time.monotonic() - killed_at < 5
        assert text_of(response) == "back"


async def test_child_environment_is_the_allow_list_plus_its_own(raw_sidecar, write_config, fault_server_entry) -> None:
    # an ordinary name: a credential-named value would be hidden from the answer by design
    config = write_config({"e": fault_server_entry(env={"OWN_SETTING": "configured-value"})})
    parent_env = {"PARENT_SECRET": "must-not-pass", "LANG": "C.UTF-8"}
    async with raw_sidecar(config, env=parent_env) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["e__env"])
        env = json.loads(text_of(await sc.call("e__env")))
        assert env["OWN_SETTING"] == "configured-value"
        assert "PARENT_SECRET" not in env
        assert env.get("LANG") == "C.UTF-8"
        assert set(env) <= {"PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ", "OWN_SETTING", "PWD", "SHLVL", "_", "LC_CTYPE"}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(")")[-1].split()[0] != "Z"


@pytest.mark.parametrize("how", ["eof", "sigterm", "sigint"])
async def test_shutdown_stops_every_child(raw_sidecar, write_config, fault_server_entry, how: str) -> None:
    config = write_config({"a": fault_server_entry(), "stubborn": fault_server_entry("ignore-sigterm", "linger=60")})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["a__pid", "stubborn__pid"])
        pids = [int(text_of(await sc.call(name))) for name in ("a__pid", "stubborn__pid")]
        if how == "eof":
            await sc.close_stdin()
        else:
            sc.process.send_signal(signal.SIGTERM if how == "sigterm" else signal.SIGINT)
        assert await sc.wait_exit(timeout=15) is not None
        with anyio.fail_after(5):
            while any(_alive(p) for p in pids):
                await anyio.sleep(0.05)


async def test_an_upstream_that_closes_its_stdin_fails_calls_cleanly(raw_sidecar, write_config, fault_server_entry) -> None:
    config = write_config({"p": fault_server_entry("name=p"), "q": fault_server_entry("name=q")})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["p__close_stdin", "q__echo"])
        await sc.send_request("tools/call", {"name": "p__close_stdin", "arguments": {}})
        for n in range(5):
            await sc.send_request("tools/call", {"name": "p__echo", "arguments": {"nonce": f"{n}"}})
        assert text_of(await sc.call("q__echo", {"nonce": "fine"})) == "fine"
        assert sc.process.returncode is None


async def test_sidecar_killed_leaves_no_orphans(raw_sidecar, write_config, fault_server_entry) -> None:
    config = write_config({"a": fault_server_entry()})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["a__pid"])
        child = int(text_of(await sc.call("a__pid")))
        sc.process.send_signal(signal.SIGKILL)
        await sc.wait_exit()
        with anyio.fail_after(5):
            while _alive(child):
                await anyio.sleep(0.05)


async def test_an_engine_that_leaves_at_once_leaves_no_child(sidecar_argv, write_config, fault_server_entry, tmp_path) -> None:
    """`claude mcp list`-style probes: stdin closes right after start; early-started children go too."""
    import subprocess

    record = tmp_path / "events.jsonl"
    config = write_config({"a": fault_server_entry(f"record={record}", "ignore-sigterm")})
    for _ in range(3):
        run = subprocess.run(sidecar_argv(config), input=b"", capture_output=True, timeout=30)
        assert run.returncode == 0, run.stderr[-2000:]
    pids = {json.loads(line)["pid"] for line in record.read_text().splitlines()} if record.exists() else set()
    with anyio.fail_after(5):
        while any(_alive(pid) for pid in pids):
            await anyio.sleep(0.05)
