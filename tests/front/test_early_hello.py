"""The early `initialize` on a real process: the engine's first lines are already in the
pipe when the sidecar starts (written before it was spawned), so the entry point answers
the handshake before msgspec and the CLI load (or, for what its reader is not certain of,
the CLI before the runtime loads); the lines after it are served by the stdio front in
order, and the session is the one the dispatcher's answer would have left (its revision,
notifications flowing). An upstream that cannot start is not offered as starting. A
config found invalid after an early answer ends the process as before (exit 2, the
config error on stderr): the engine has had its `initialize` answered, then stdout ends."""

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

    def __init__(self, config: Path, waiting: bytes, start: tuple[str, ...] = ("-m", "sidecar")) -> None:
        read_end, self.write_end = os.pipe()
        os.write(self.write_end, waiting)
        self.process = subprocess.Popen([sys.executable, *start, "--config", str(config)], stdin=read_end,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env(),
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

    def close(self) -> int:
        os.close(self.write_end)
        assert self.process.stderr is not None
        self.stderr = self.process.stderr.read().decode()  # until the process ends (a log line or two)
        return self.process.wait(timeout=STARTUP_WAIT)


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


# Run as `python -m sidecar` does, noting at the moment the entry point writes its answer
# which of msgspec, the config and the CLI are loaded (none should be).
_NOTING = ("import sys\n"
           "import sidecar.stdin_ahead as ahead\n"
           "into = sys.argv[1]\n"
           "write = ahead.write_whole\n"
           "def noted(answer):\n"
           "    loaded = [m for m in ('msgspec', 'sidecar.config', 'sidecar.cli', 'sidecar.settings') if m in sys.modules]\n"
           "    open(into, 'w').write(' '.join(['answered', *loaded]))\n"
           "    write(answer)\n"
           "ahead.write_whole = noted\n"
           "sys.argv = ['omb-sidecar', *sys.argv[2:]]\n"
           "from sidecar.entry import main\n"
           "raise SystemExit(main())\n")


def test_the_entry_point_answers_before_msgspec_and_the_cli_load(tmp_path: Path) -> None:
    noted = tmp_path / "noted.txt"
    first = [_init(1, "2025-11-25"), {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    sidecar = _Sidecar(_config(tmp_path, sys.executable), _frames(first), ("-c", _NOTING, str(noted)))
    try:
        hello = sidecar.wait_for(lambda f: f.get("id") == 1)
        assert hello["result"]["protocolVersion"] == "2025-11-25"
        assert "io.modelcontextprotocol/tasks" in hello["result"]["capabilities"]["extensions"]
        tools = sidecar.wait_for(lambda f: f.get("id") == 2)["result"]["tools"]
        assert "notes__search_notes" in [t["name"] for t in tools]
    finally:
        sidecar.close()
    assert noted.read_text() == "answered", noted.read_text()


def test_what_the_entry_point_is_unsure_of_the_cli_answers(tmp_path: Path) -> None:
    """An extra member in the envelope: the strict reader takes it, the plain one leaves it."""
    odd = {**_init(1), "extra": True}
    sidecar = _Sidecar(_config(tmp_path, sys.executable), _frames([odd, {"jsonrpc": "2.0", "id": 2, "method": "ping"}]))
    try:
        assert sidecar.wait_for(lambda f: f.get("id") == 1)["result"]["protocolVersion"] == "2025-03-26"
        assert sidecar.wait_for(lambda f: f.get("id") == 2)["result"] == {}
    finally:
        sidecar.close()


def test_an_invalid_config_after_the_early_answer_ends_as_before(tmp_path: Path) -> None:
    """The entry point's reader does not judge the other sections' values: a bad one is
    found by the config after `initialize` was answered; the process ends with exit 2 and
    the config error, and no upstream outlives it."""
    config = tmp_path / "sidecar.json"
    config.write_text(json.dumps({"mcpServers": {"notes": {"command": sys.executable, "args": [str(NOTES)]}},
                                  "budgets": {"resultChars": "many"}}))
    sidecar = _Sidecar(config, _frames([_init(1)]))
    try:
        assert sidecar.wait_for(lambda f: f.get("id") == 1)["result"]["serverInfo"]["name"] == "omb-sidecar"
    finally:
        code = sidecar.close()
    assert code == 2 and "config error" in sidecar.stderr, (code, sidecar.stderr)
