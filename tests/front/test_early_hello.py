"""The early `initialize` on a real process: the engine's first lines are already in the
pipe when the sidecar starts (written before it was spawned), so the CLI answers the
handshake before the runtime loads; the lines after it are served by the stdio front in
order, and the session is the one the dispatcher's answer would have left (its revision,
notifications flowing). An upstream that cannot start is not offered as starting."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.conftest import REPO, STARTUP_WAIT, child_env

NOTES = REPO / "sidecar" / "examples" / "notes.py"


def _frames(lines: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def _init(rid: int, protocol: str = "2025-03-26") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "initialize",
            "params": {"protocolVersion": protocol, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}


class _Sidecar:
    """A sidecar whose stdin already holds `waiting` when it starts."""

    def __init__(self, config: Path, waiting: bytes) -> None:
        read_end, self.write_end = os.pipe()
        os.write(self.write_end, waiting)
        self.process = subprocess.Popen([sys.executable, "-m", "sidecar", "--config", str(config)], stdin=read_end,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=child_env(),
                                        cwd=str(REPO), start_new_session=True)
        os.close(read_end)
        self.buffer = b""
        self.frames: list[dict[str, Any]] = []

    def send(self, lines: list[dict[str, Any]]) -> None:
        os.write(self.write_end, _frames(lines))

    def wait_for(self, wanted: Any, timeout: float = STARTUP_WAIT) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for frame in self.frames[seen:]:
                if wanted(frame):
                    return frame
            seen = len(self.frames)
            assert self.process.stdout is not None
            left = deadline - time.monotonic()
            assert left > 0 and select.select([self.process.stdout], [], [], left)[0], f"no such frame: {self.frames}"
            chunk = os.read(self.process.stdout.fileno(), 1 << 16)
            assert chunk, f"stdout closed: {self.frames}"
            self.buffer += chunk
            *lines, self.buffer = self.buffer.split(b"\n")
            self.frames += [json.loads(line) for line in lines if line.strip()]

    def close(self) -> None:
        os.close(self.write_end)
        self.process.wait(timeout=STARTUP_WAIT)


def _config(tmp_path: Path, command: str) -> Path:
    config = tmp_path / "sidecar.json"
    config.write_text(json.dumps({"mcpServers": {"notes": {"command": command, "args": [str(NOTES)]}}}))
    return config


def test_a_waiting_initialize_is_answered_and_the_session_goes_on(tmp_path: Path) -> None:
    first = [_init(1), {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "ping"}]
    sidecar = _Sidecar(_config(tmp_path, sys.executable), _frames(first))
    try:
        hello = sidecar.wait_for(lambda f: f.get("id") == 1)
        assert sidecar.frames[0] is hello  # the first thing written
        assert hello["result"]["protocolVersion"] == "2025-03-26"
        assert hello["result"]["capabilities"]["resources"] == {"listChanged": True, "subscribe": True}
        assert sidecar.wait_for(lambda f: f.get("id") == 2)["result"] == {}
        # notifications flow (the session counts as announced): the notes tools arrive with list_changed
        sidecar.wait_for(lambda f: f.get("method") == "notifications/tools/list_changed")
        sidecar.send([{"jsonrpc": "2.0", "id": 3, "method": "tools/list"}])
        tools = sidecar.wait_for(lambda f: f.get("id") == 3)["result"]["tools"]
        assert "notes__search_notes" in [t["name"] for t in tools]
        sidecar.send([_init(4, "2024-11-05")])  # a second initialize: the dispatcher's, the same shape
        again = sidecar.wait_for(lambda f: f.get("id") == 4)["result"]
        assert again["protocolVersion"] == "2024-11-05" and again["serverInfo"] == hello["result"]["serverInfo"]
    finally:
        sidecar.close()


def test_another_first_line_leaves_the_handshake_to_the_dispatcher(tmp_path: Path) -> None:
    first = [{"jsonrpc": "2.0", "id": 1, "method": "ping"}, _init(2)]
    sidecar = _Sidecar(_config(tmp_path, sys.executable), _frames(first))
    try:
        assert sidecar.wait_for(lambda f: f.get("id") == 1)["result"] == {}
        assert sidecar.wait_for(lambda f: f.get("id") == 2)["result"]["protocolVersion"] == "2025-03-26"
    finally:
        sidecar.close()


def test_an_upstream_that_cannot_start_is_not_offered(tmp_path: Path) -> None:
    sidecar = _Sidecar(_config(tmp_path, str(tmp_path / "no-such-command")), _frames([_init(1)]))
    try:
        assert sidecar.wait_for(lambda f: f.get("id") == 1)["result"]["capabilities"] == {"tools": {"listChanged": True}}
    finally:
        sidecar.close()
