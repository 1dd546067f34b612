"""An engine that stops reading stdout cannot grow the sidecar (issue 12, class 3).

A real upstream (tests/upstreams/fault_server.py, its `spew` tool) floods notifications
of one shape (kind, frame size, rate) toward a real sidecar whose engine, a raw driver,
stops reading stdout. The sidecar's RSS, sampled from /proc while the flood runs, stays
within its baseline plus 64 MB; once the engine reads again, the answer to the call that
started the flood, and to requests sent while it was not reading, all arrive; the
drops are counted in a warning. The rules behind it (what is shed first, what is never
shed) are pinned in memory by `test_shedding.py`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from flood_support import BUDGET, MB, FloodShape, LineReader, RssSampler, rss, stop

from sidecar.wire.outbox import CHATTER
from tests.conftest import REPO, child_env, read_event_file

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

# Each shape carries well over the budget, so an unbounded queue would fail the test.
SHAPES = [
    FloodShape("notifications/message", 9_000, 16 * 1024),  # big log lines, as fast as possible
    FloodShape("notifications/progress", 240_000, 400),  # many small progress frames
    FloodShape("notifications/resources/updated", 40_000, 3_000),
    FloodShape("notifications/message", 1_600, 96 * 1024, per_second=1_600),  # paced, huge frames
]
if os.environ.get("OMB_FLOOD_LONG"):
    SHAPES += [
        FloodShape("notifications/message", 1_000_000, 300),
        FloodShape("notifications/progress", 20_000, 64 * 1024),
        FloodShape("notifications/custom/thing", 100_000, 2_000),
        FloodShape("notifications/message", 20_000, 32 * 1024, per_second=4_000),
    ]
# What the face relays to this engine: a resource's update reaches only a session subscribed
# to its URI, and this engine subscribed to none, so that flood is never relayed.
RELAYED = CHATTER
FLOOD_WAIT = 240.0  # seconds for the whole flood on a loaded 2-core box


class Engine:
    """A raw engine on the sidecar's stdio that reads stdout only when told to."""

    def __init__(self, config: Path, stderr: Path) -> None:
        self.stderr_path = stderr
        self.process = subprocess.Popen(
            [sys.executable, "-m", "sidecar", "--config", str(config), "--log-level", "INFO"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr.open("wb"),
            env=child_env(), cwd=REPO, start_new_session=True,
        )
        assert self.process.stdout is not None
        self.reader = LineReader(self.process.stdout.fileno())
        self.frames: list[dict[str, Any]] = []

    def send(self, frame: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **frame}).encode() + b"\n")
        self.process.stdin.flush()

    def read_until(self, done: Any, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            left = deadline - time.monotonic()
            assert left > 0, f"gave up after {timeout}s; last frames: {self.frames[-3:]}; stderr: {self.stderr()[-2000:]}"
            self.frames += [json.loads(line) for line in self.reader.lines(min(left, 1.0))]

    def answer(self, ident: Any, timeout: float = 30.0) -> dict[str, Any]:
        self.read_until(lambda: any(f.get("id") == ident and "method" not in f for f in self.frames), timeout)
        return next(f for f in self.frames if f.get("id") == ident and "method" not in f)

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")


def _ready_engine(tmp_path: Path, write_config: Any, fault_server_entry: Any) -> tuple[Engine, Path]:
    record = tmp_path / "upstream.jsonl"
    config = write_config({"fault": fault_server_entry("spew", f"record={record}")})
    engine = Engine(config, tmp_path / "stderr.txt")
    engine.send({"id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "flood", "version": "1"}}})
    engine.answer("init")
    engine.send({"method": "notifications/initialized"})
    for attempt in range(200):  # bounded: the upstream's tools show up once it is ready
        engine.send({"id": f"list-{attempt}", "method": "tools/list"})
        if any(t["name"] == "fault__spew" for t in engine.answer(f"list-{attempt}")["result"]["tools"]):
            return engine, record
        engine.read_until(lambda: any(f.get("method") == "notifications/tools/list_changed" for f in engine.frames), 30)
    raise AssertionError("the upstream never listed fault__spew")


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_a_flood_toward_an_engine_that_stops_reading_stays_within_budget(
    shape: FloodShape, tmp_path: Path, write_config: Any, fault_server_entry: Any,
) -> None:
    engine, record = _ready_engine(tmp_path, write_config, fault_server_entry)
    try:
        baseline = rss(engine.process.pid)
        meta = {"progressToken": "flood"} if shape.method == "notifications/progress" else {}
        engine.send({"id": "flood", "method": "tools/call",
                     "params": {"name": "fault__spew", "arguments": shape.arguments("after-the-flood"), "_meta": meta}})
        with RssSampler(engine.process.pid) as sampler:  # the engine reads nothing meanwhile
            deadline = time.monotonic() + FLOOD_WAIT
            while not any(e["event"] == "spewed" for e in read_event_file(record)):
                assert time.monotonic() < deadline, "the upstream did not finish its flood"
                assert engine.process.poll() is None, engine.stderr()[-2000:]
                time.sleep(0.05)  # polls another process's record; the RSS sampler runs beside it
            engine.send({"id": "ping-while-full", "method": "ping"})
            engine.send({"id": "echo-while-full", "method": "tools/call",
                         "params": {"name": "fault__echo", "arguments": {"nonce": "still-here"}}})
        grown = sampler.peak - baseline
        print(f"{shape}: {shape.total / MB:.0f} MB flooded; RSS baseline {baseline / MB:.1f} MB, "
              f"peak {sampler.peak / MB:.1f} MB (+{grown / MB:.1f} MB)")
        assert grown <= BUDGET, f"RSS grew by {grown / MB:.1f} MB under {shape}"
        # The engine reads again: every answer it is owed arrives, in full.
        assert engine.answer("flood", 120)["result"]["content"][0]["text"] == "after-the-flood"
        assert engine.answer("ping-while-full")["result"] == {}
        assert "still-here" in json.dumps(engine.answer("echo-while-full")["result"])
        engine.send({"id": "after", "method": "tools/call",
                     "params": {"name": "fault__echo", "arguments": {"nonce": "after"}}})
        assert "after" in json.dumps(engine.answer("after")["result"])
        relayed = sum(1 for f in engine.frames if f.get("method") == shape.method)
        if shape.method not in RELAYED:  # a kind the sidecar never relays costs nothing at all
            assert relayed == 0
            return
        assert relayed < shape.count, "some of the flood must have been shed"
        assert "not reading fast enough" in engine.stderr() and "dropped so far" in engine.stderr()
        if shape.method not in CHATTER:  # it filled stdout to the hard mark: stdin was paused
            assert "reading its requests is paused" in engine.stderr()
    finally:
        stop(engine.process)
