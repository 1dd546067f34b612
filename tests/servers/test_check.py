"""`check`: the bounded Test against real processes and a small HTTP server on 127.0.0.1.

The URL cases need the Streamable HTTP channel (`sidecar.upstream.http`); they are skipped,
saying so, in a build where it does not import.
"""

from __future__ import annotations

import importlib
import json
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from sidecar.config import ServerConfig, parse_server
from sidecar_admin.check import check_server, tool_warnings


def _imports(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


needs_http = pytest.mark.skipif(
    not _imports("sidecar.upstream.http"), reason="sidecar.upstream.http (the Streamable HTTP channel) is not in this build"
)


def server(name: str, entry: dict[str, Any]) -> ServerConfig:
    return parse_server(name, entry)


async def wait_gone(pid: int, timeout: float = 5.0) -> bool:
    with anyio.move_on_after(timeout):
        while True:
            try:
                with open(f"/proc/{pid}/stat") as stat:
                    if stat.read().split(") ", 1)[1].startswith("Z"):
                        return True  # exited; only its entry waits to be reaped
            except (FileNotFoundError, ProcessLookupError):
                return True
            await anyio.sleep(0.05)
    return False


# -- commands -------------------------------------------------------------------------------


async def test_server_everything_over_stdio(npm: Any) -> None:
    result = await check_server(server("everything", npm.everything_entry()))
    assert result.outcome == "connected", result.reason
    assert result.tools == len(result.tool_names) > 5
    assert {"echo", "get-sum"} <= set(result.tool_names)
    assert result.headline == f"Connected: {result.tools} tools"
    assert result.warnings == []


async def test_a_hanging_command_is_stopped_at_8_seconds(fault_server_path: Path, tmp_path: Path) -> None:
    record = tmp_path / "events.jsonl"
    entry = {"command": sys.executable, "args": [str(fault_server_path), "no-init", f"record={record}"]}
    started = time.monotonic()
    result = await check_server(server("hangs", entry))
    took = time.monotonic() - started
    assert result.outcome == "timed-out"
    assert result.headline == "Not connected: no answer within 8 s; trying again may help"
    assert 8.0 <= took < 11.0
    pid = next(json.loads(line)["pid"] for line in record.read_text().splitlines())
    assert await wait_gone(pid, timeout=1.0)


async def test_a_stdout_flood_is_capped_and_the_process_is_gone(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    flood = ("import os, sys\nopen(sys.argv[1], 'w').write(str(os.getpid()))\n"
             "line = b'x' * 65535 + b'\\n'\nwhile True:\n    sys.stdout.buffer.write(line)\n")
    started = time.monotonic()
    result = await check_server(server("floods", {"command": sys.executable, "args": ["-c", flood, str(pid_file)]}))
    assert result.outcome == "failed"
    assert result.reason == "it sent more than 32 MB before listing its tools; it was stopped"
    assert time.monotonic() - started < 8.0  # the cap ended it, not the clock
    assert await wait_gone(int(pid_file.read_text()))


async def test_one_endless_line_is_dropped_at_the_cap_and_the_clock_ends_it(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    flood = ("import os, sys\nopen(sys.argv[1], 'w').write(str(os.getpid()))\n"
             "chunk = b'y' * (1 << 20)\nwhile True:\n    sys.stdout.buffer.write(chunk)\n")
    result = await check_server(server("endless", {"command": sys.executable, "args": ["-c", flood, str(pid_file)]}),
                                seconds=2.0)
    assert result.outcome == "timed-out"
    assert await wait_gone(int(pid_file.read_text()))


async def test_a_server_with_200_tools_gets_the_cap_warning(fault_server_path: Path) -> None:
    entry = {"command": sys.executable, "args": [str(fault_server_path), "filler-tools=200"]}
    result = await check_server(server("big", entry), tool_cap=128)
    assert result.outcome == "connected" and result.tools > 200
    assert result.warnings == [
        f"it alone has {result.tools} tools, more than the 128 an API-model bot takes in one turn: "
        "those bots reach its tools through a tool search"
    ]


async def test_half_the_cap_and_colliding_names_are_warned(fault_server_path: Path) -> None:
    entry = {"command": sys.executable, "args": [str(fault_server_path), "filler-tools=50"]}
    result = await check_server(server("half", entry), tool_cap=128, others={"other": ["echo", "sleep", "zzz"]})
    assert result.outcome == "connected"
    assert result.warnings == [
        f"it has {result.tools} tools, at least half of the 128 an API-model bot takes in one turn",
        "its tool names collide with 'other': echo, sleep",
    ]


def test_warning_words() -> None:
    assert tool_warnings(10, ["a"], 128, {}, "me") == []
    assert tool_warnings(64, [], 128, {}, "me")[0].startswith("it has 64 tools, at least half")
    many = [f"t{i}" for i in range(8)]
    assert tool_warnings(8, many, 128, {"me": many, "x": many}, "me") == [
        "its tool names collide with 'x': t0, t1, t2, t3, t4 and 3 more"]


async def test_a_missing_command(tmp_path: Path) -> None:
    result = await check_server(server("nope", {"command": str(tmp_path / "missing-binary")}))
    assert (result.outcome, result.reason) == ("failed", "its command could not be started (No such file or directory)")


async def test_a_command_that_exits_at_once(fault_server_path: Path) -> None:
    entry = {"command": sys.executable, "args": [str(fault_server_path), "exit-on-start=3"]}
    result = await check_server(server("quits", entry))
    assert (result.outcome, result.reason) == ("failed", "it stopped (exit code 3) before it finished the handshake")


async def test_an_entry_with_blanks_is_not_started() -> None:
    entry = {"command": "/bin/false-does-not-matter", "env": {"TOKEN": ""}, "args": ["--key", "<needs a value>", ""]}
    result = await check_server(server("blank", entry))
    assert (result.outcome, result.reason) == ("needs-values", "it still needs a value for env TOKEN, argument 2")


async def test_the_child_gets_only_the_allow_list_and_its_own_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PARENT_PROVIDER_KEY", "parent-canary-1")
    dump = tmp_path / "env.json"
    script = "import json, os, sys\njson.dump(dict(os.environ), open(sys.argv[1], 'w'))\nsys.exit(1)\n"
    entry = {"command": sys.executable, "args": ["-c", script, str(dump)], "env": {"OWN_TOKEN": "own-value"}}
    await check_server(server("envcheck", entry))
    seen = json.loads(dump.read_text())
    assert seen["OWN_TOKEN"] == "own-value"
    assert "PARENT_PROVIDER_KEY" not in seen
    assert not {k for k in seen if k.startswith(("OMB_", "OGB_"))}


async def test_stderr_and_stdout_noise_are_never_shown() -> None:
    script = ("import sys\nsys.stderr.write('stderr-canary-7 ' * 100)\nprint('stdout-canary-8')\n"
              "sys.stderr.flush(); sys.stdout.flush(); sys.exit(2)\n")
    result = await check_server(server("noisy", {"command": sys.executable, "args": ["-c", script]}))
    assert result.outcome == "failed"
    assert "canary" not in result.reason and "canary" not in result.headline


# -- addresses ------------------------------------------------------------------------------


@needs_http
async def test_a_server_that_wants_a_header(serve_http: Callable[..., Any]) -> None:
    spec, url = await serve_http()
    nothing = await check_server(server("tiny", {"url": url}))
    assert (nothing.outcome, nothing.reason) == (
        "refused", "the server refused the connection (HTTP 401) and this entry sends no headers")
    wrong = await check_server(server("tiny", {"url": url, "headers": {"X-Api-Key": "wrong-canary-9"}}))
    assert (wrong.outcome, wrong.reason, wrong.sign_in) == (
        "refused", "the server refused the keys (HTTP 401): check the headers X-Api-Key", False)
    right = await check_server(server("tiny", {"url": url, "headers": {"X-Api-Key": "right-key"}}))
    assert (right.outcome, right.headline, right.tool_names) == ("connected", "Connected: 2 tools", ["lookup", "search"])
    assert "wrong-canary-9" in spec.seen_keys  # it really was sent, and never shown


@needs_http
@pytest.mark.parametrize(("challenge", "metadata", "refusal"), [(True, False, 401), (False, True, 403)])
async def test_a_refusal_that_points_to_a_sign_in(
    serve_http: Callable[..., Any], challenge: bool, metadata: bool, refusal: int
) -> None:
    _, url = await serve_http(challenge=challenge, metadata=metadata, refusal=refusal)
    result = await check_server(server("signin", {"url": url, "headers": {"X-Api-Key": "nope"}}))
    assert result.outcome == "refused" and result.sign_in
    assert result.reason == (f"the server refused the keys (HTTP {refusal}): check the headers X-Api-Key; "
                             "it points to a sign-in (RFC 9728 protected resource metadata)")


@needs_http
async def test_an_unreachable_address() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again below: nothing listens there
    result = await check_server(server("gone", {"url": f"http://127.0.0.1:{port}/mcp"}))
    assert (result.outcome, result.reason) == (
        "unreachable", f"http://127.0.0.1:{port} could not be reached; trying again may help")


@needs_http
async def test_an_address_whose_host_does_not_resolve() -> None:
    result = await check_server(server("nohost", {"url": "https://no-such-host.invalid/mcp"}))
    assert result.outcome == "unreachable"
    assert result.reason == "https://no-such-host.invalid could not be reached; trying again may help"

