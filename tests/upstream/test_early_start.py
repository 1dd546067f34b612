"""The stdio upstreams a plain `--config PATH` start launches before the config module loads
(`sidecar.upstream.plain_config`, `sidecar.entry`): only what the full config and mount plan
start, before msgspec and the runtime load, adopted for the first start, and never left
behind by a sidecar that dies or does not serve."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sidecar.config import parse_config, rules
from sidecar.errors import ConfigError
from sidecar.mounts.heads import HEALTH_FILE
from sidecar.mounts.plan import plan_mounts
from sidecar.mounts.reach import reaches
from sidecar.upstream import plain_config
from sidecar.upstream.plain_config import early_launches, plain_config_path, records_a_failure
from sidecar.upstream.spawn import Launch
from tests.conftest import REPO

WAIT = 20.0  # seconds: every wait below is on a condition, bounded by this


def test_the_config_rules_it_copies_are_the_configs() -> None:
    assert plain_config._RESERVED_NAMES == rules.RESERVED_NAMES
    assert plain_config.NEEDS_VALUE == rules.NEEDS_VALUE and plain_config.HEALTH_FILE == HEALTH_FILE


@pytest.mark.parametrize(("argv", "path"), [
    (["--config", "c.json"], "c.json"), (["serve", "--config", "c.json"], "c.json"), (["--config=c.json"], "c.json"),
    (["--help"], None), (["check", "--config", "c.json", "x"], None), (["--config", "c.json", "--http", "h:1"], None),
    (["--examples"], None), ([], None), (["--config", "--http"], None), (["demo"], None),
])
def test_only_a_plain_serve_starts_anything_early(argv: list[str], path: str | None) -> None:
    assert plain_config_path(argv) == path


# -- only what the full config and the mount plan start ----------------------------------------

_ALIASES = st.sampled_from(["a", "b", "files", "x__y", "Bad", "mcp", "sidecar", "ok-1", "c_2"])
_WORD = st.sampled_from(["node", "srv", "", "<needs a value>", "-y", "x"])
_ENV = st.dictionaries(st.sampled_from(["TOKEN", "OMB_X", "ELECTRON_RUN_AS_NODE", "A=B", " A", "K"]),
                       st.sampled_from(["v", "", "1", "a\0b"]), max_size=2)
_ENTRY = st.one_of(
    st.fixed_dictionaries({"command": st.sampled_from(["node", "python", ""])},
                          optional={"args": st.lists(_WORD, max_size=2), "env": _ENV,
                                    "cwd": st.sampled_from([None, "/tmp"]),
                                    "type": st.sampled_from(["stdio", "http", "sse"]),
                                    "enabled": st.booleans(), "url": st.just("https://example.com/mcp"),
                                    "builtin": st.booleans(), "resultChars": st.sampled_from([1000, "many"])}),
    st.just("not an entry"),
    st.just({"url": "https://example.com/mcp"}),
)
_SECTIONS = st.fixed_dictionaries({}, optional={
    "bot": st.sampled_from([{"id": "b"}, {"id": "b", "selection": {"servers": ["a"]}},
                            {"selection": {"tools": ["b__*"]}}, {"selection": None}]),
    "grants": st.sampled_from([{}, {"allow": ["a__*"]}, {"deny": ["b__*"]}, {"allow": None, "deny": []}]),
    "organization": st.sampled_from([{"customServers": False, "approved": ["a"]}, {}]),
    "budgets": st.just({"resultChars": 4000}),
    "face": st.just({"name": "omb"}),
    "data": st.just({"folder": "/tmp/elsewhere"}),
})


def _mounted_launches(document: dict[str, Any]) -> set[tuple[str, Launch]] | None:
    """What the CLI starts for `document` (no health records): None for an invalid config."""
    try:
        config = parse_config(document, {})
    except ConfigError:
        return None
    plan = plan_mounts(config.servers, {})
    return {(s.alias, Launch.of(s)) for s in plan.mounted
            if s.type == "stdio" and s.command and reaches(config, s.alias)}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_SECTIONS, st.just({}), st.just({"bot": {"id": "b"}, "grants": {"deny": []}})),
       st.lists(st.tuples(_ALIASES, _ENTRY), max_size=4))
def test_it_starts_only_what_the_config_and_the_plan_start(sections: dict[str, Any],
                                                           entries: list[tuple[str, Any]]) -> None:
    document = {**sections, "mcpServers": dict(entries)}
    early = early_launches(json.loads(json.dumps(document)))
    mounted = _mounted_launches(document)
    if mounted is not None:
        assert set(early) <= mounted
    assert len({alias for alias, _ in early}) == len(early)


def test_a_plain_config_starts_every_server() -> None:
    document = {"bot": {"id": "b"}, "budgets": {"resultChars": 100},
                "mcpServers": {"a": {"command": "node", "args": ["a.js"], "env": {"TOKEN": "t"}},
                               "b": {"type": "stdio", "command": "python", "args": ["-m", "b"]},
                               "same": {"command": "node", "args": ["a.js"], "env": {"TOKEN": "t"}},
                               "web": {"url": "https://example.com/mcp"}}}
    assert [alias for alias, _ in early_launches(document)] == ["a", "b"]  # `same` is a duplicate, left out
    assert set(early_launches(document)) == _mounted_launches(document)  # what the plan mounts, all of it


def test_a_failed_record_is_found_in_a_real_health_file_and_not_in_a_definition(tmp_path: Path) -> None:
    from sidecar.mounts.health import HealthFile, HealthRecord

    path = tmp_path / HEALTH_FILE
    with HealthFile(path).edit() as records:
        records["a"] = HealthRecord(ok=True, checked_at=1.0, outcome="connected",
                                    reason='a tool says {"ok":false} and "ok": false')
    assert not records_a_failure(path.read_bytes())
    with HealthFile(path).edit() as records:
        records["b"] = HealthRecord(ok=False, checked_at=2.0, outcome="failed", reason="no")
    assert records_a_failure(path.read_bytes())


# -- the config read without `json` or `re` (what loads before the first spawn) -----------------

_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20)
_SPACES = st.text(alphabet=" \t\n\r\x0b\x0c", max_size=3)


def _loads_or_refusal(data: bytes, read: Any) -> object:
    try:
        return ("value", read(data))
    except ValueError:  # json.JSONDecodeError and UnicodeDecodeError are ValueErrors
        return ("refused",)
    except RecursionError:
        return ("too deep",)


@settings(max_examples=400, deadline=None)
@given(_JSON_VALUES, _SPACES, _SPACES, st.booleans())
def test_the_config_is_read_as_json_loads_reads_it(value: object, before: str, after: str, ascii_only: bool) -> None:
    data = (before + json.dumps(value, ensure_ascii=ascii_only) + after).encode("utf-8", "surrogatepass")
    assert repr(_loads_or_refusal(data, plain_config.json_document)) == repr(_loads_or_refusal(data, json.loads))


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.binary(max_size=40),
                 st.lists(st.sampled_from([b"{", b"}", b"[", b"]", b'"a"', b":", b",", b" ", b"\n", b"\x0c", b"1",
                                           b"-0.5e3", b"NaN", b"Infinity", b"-Infinity", b"true", b"nul", b'"\\u00e9"',
                                           b'"\\ud800"', b"\xef\xbb\xbf", b"\xff\xfe", b"\0", b"\xc3\xa9", b"\xff"]),
                          max_size=12).map(b"".join)))
def test_any_bytes_read_as_json_loads_reads_them(data: bytes) -> None:
    assert repr(_loads_or_refusal(data, plain_config.json_document)) == repr(_loads_or_refusal(data, json.loads))


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="az09_-A\n .", max_size=35) | st.sampled_from(["a" * 32, "a" * 33, "a\n", "a\n\n", "\na", ""]))
def test_a_name_is_valid_as_the_configs_rule_says(alias: str) -> None:
    import re

    assert plain_config.valid_name(alias) == bool(re.match(r"^[a-z][a-z0-9_-]{0,31}$", alias))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([b'"ok"', b":", b"false", b" ", b"\t", b"\n", b"\x0b", b"\x0c", b"\r", b'"', b"ok",
                                 b"fals", b"{", b"x"]), max_size=10).map(b"".join))
def test_a_failed_record_is_found_as_the_pattern_finds_it(health: bytes) -> None:
    import re

    assert records_a_failure(health) == (re.search(rb'"ok"\s*:\s*false', health) is not None)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([b'"ok"', b":", b"false", b" ", b"\n", b'"', b"ok", b"o", b"k", b"fals", b"f", b"e",
                                 b"{", b"x"]), max_size=14).map(b"".join), st.integers(min_value=1, max_value=9))
def test_the_health_file_read_in_pieces_finds_what_the_pattern_finds(health: bytes, read_size: int) -> None:
    """However the file is cut into reads, a failed record is found as in the whole file."""
    import re
    import tempfile

    with tempfile.NamedTemporaryFile() as file:
        file.write(health)
        file.flush()
        found = plain_config._health_records_a_failure(file.name, read_size)
    assert found == (re.search(rb'"ok"\s*:\s*false', health) is not None), (health, read_size)


def test_a_health_file_read_in_pieces_holds_a_few_bytes_across_a_long_gap(tmp_path: Path) -> None:
    health = tmp_path / "health.json"
    health.write_bytes(b'{"a": {"ok"' + b" " * 300_000 + b":" + b"\n" * 300_000 + b"false}}")
    assert plain_config._health_records_a_failure(str(health), 4096)
    assert plain_config._unsettled(b'x"ok"   :  fal') == b'"ok":fal'
    assert not plain_config._health_records_a_failure(str(tmp_path / "missing.json"))
    assert plain_config._health_records_a_failure(str(tmp_path))  # unreadable: nothing starts early


def test_a_launch_is_the_tuple_it_names() -> None:
    launch = Launch("node", ("a.js",), (("K", "v"),), None)
    same = Launch(command="node", args=("a.js",), env=(("K", "v"),), cwd=None)
    assert launch == same == ("node", ("a.js",), (("K", "v"),), None) and hash(launch) == hash(same)
    assert (launch.command, launch.args, launch.env, launch.cwd) == ("node", ("a.js",), (("K", "v"),), None)
    assert launch != Launch("node", ("a.js",), (), None) and len({launch, same}) == 1
    assert repr(launch) == "Launch(command='node', args=('a.js',), env=(('K', 'v'),), cwd=None)"


# The entry point as the `omb-sidecar` script runs it, from an interpreter without `site`
# (no editable-install finder, no `.pth` file), saying which modules are loaded when the
# first upstream is spawned beyond those the bare interpreter had.
_AT_FIRST_SPAWN = ("import sys, os\n"
                   "bare = set(sys.modules)\n"
                   "def hook(event, args):\n"
                   "    if event == 'os.posix_spawn':\n"
                   "        os.write(2, ('SPAWN ' + ' '.join(sorted(set(sys.modules) - bare))).encode() + b'\\n')\n"
                   "        os._exit(0)\n"
                   "sys.addaudithook(hook)\n"
                   "from sidecar.entry import main\n"
                   "sys.exit(main())\n")


def test_nothing_but_the_entry_and_the_early_start_loads_before_the_first_spawn(tmp_path: Path) -> None:
    """No `json`, `re`, `typing`, `collections`, `enum` or `signal` (about 25 ms of CPU on a
    small machine, before the upstreams' own start could begin)."""
    config = _config(tmp_path, {"a": {"command": sys.executable, "args": ["-c", "pass"]}})
    done = subprocess.run([sys.executable, "-S", "-c", _AT_FIRST_SPAWN, "--config", str(config)], cwd=REPO,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=WAIT)
    [line] = [line for line in done.stderr.decode().splitlines() if line.startswith("SPAWN")]
    assert set(line.split()[1:]) == {"__future__", "_json", "sidecar", "sidecar.entry", "sidecar.plain_json",
                                     "sidecar.upstream", "sidecar.upstream.plain_config", "sidecar.upstream.spawn"}, line


# -- real processes ------------------------------------------------------------------------------

# An upstream that says its pid through a FIFO and then waits for a signal, deaf to its
# stdin closing: only a death signal ends it when the sidecar dies.
_DEAF_UPSTREAM = ("import os, signal, sys\n"
                  "with open(sys.argv[1], 'w') as fifo: fifo.write(str(os.getpid()))\n"
                  "signal.signal(signal.SIGTERM, lambda *_: os._exit(0))\n"
                  "while True: signal.pause()\n")
# Runs the sidecar as `python -m sidecar` does, saying on stderr when a process is started
# and when msgspec, the config module and the runtime begin to load.
_WATCHED = ("import sys, runpy\n"
            "def hook(event, args):\n"
            "    if event in ('subprocess.Popen', 'os.posix_spawn'): sys.stderr.write('EVENT popen\\n')\n"
            "    elif event == 'import' and args[0] in ('msgspec', 'sidecar.config', 'asyncio', 'sidecar.app'):\n"
            "        sys.stderr.write('EVENT import ' + args[0] + '\\n')\n"
            "sys.addaudithook(hook)\n"
            "runpy.run_module('sidecar', run_name='__main__', alter_sys=True)\n")


def _config(tmp_path: Path, servers: dict[str, Any], **sections: Any) -> Path:
    path = tmp_path / "sidecar.json"
    path.write_text(json.dumps({"bot": {"id": "test-bot"}, **sections, "mcpServers": servers}))
    return path


def _start(argv: list[str], stderr: Path) -> subprocess.Popen[bytes]:
    with stderr.open("wb") as sink:
        return subprocess.Popen(argv, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=sink,
                                start_new_session=True)


def _read_pid(fifo: Path) -> int:
    fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # a writer of our own: no end-of-file before the upstream writes
    try:
        text = b""
        while not text:
            assert select.select([fd], [], [], WAIT)[0], "the upstream never started"
            text = os.read(fd, 64)
        return int(text)
    finally:
        os.close(fd)


def _wait_gone(pid: int) -> bool:
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([pidfd], [], [], WAIT)[0])
    finally:
        os.close(pidfd)


def _deaf_upstream(tmp_path: Path) -> tuple[dict[str, Any], Path]:
    fifo = tmp_path / "pid.fifo"
    os.mkfifo(fifo)
    return {"command": sys.executable, "args": ["-c", _DEAF_UPSTREAM, str(fifo)]}, fifo


def test_a_killed_sidecar_leaves_no_upstream_it_started_early(tmp_path: Path) -> None:
    entry, fifo = _deaf_upstream(tmp_path)
    config = _config(tmp_path, {"deaf": entry})
    sidecar = _start([sys.executable, "-c", _WATCHED, "--config", str(config)], tmp_path / "stderr")
    try:
        upstream = _read_pid(fifo)
        sidecar.send_signal(signal.SIGKILL)
        sidecar.wait(WAIT)
        assert _wait_gone(upstream), "the upstream outlived its sidecar"
    finally:
        _kill(sidecar)
    events = _events(tmp_path / "stderr")
    assert "popen" in events, events  # an early start: killed perhaps before msgspec even loaded
    assert "import msgspec" not in events or events.index("popen") < events.index("import msgspec"), events


def test_a_config_that_does_not_serve_stops_what_started_early(tmp_path: Path) -> None:
    entry, fifo = _deaf_upstream(tmp_path)
    config = _config(tmp_path, {"deaf": entry}, face={"layout": "no such layout"})
    sidecar = _start([sys.executable, "-c", _WATCHED, "--config", str(config)], tmp_path / "stderr")
    try:
        assert sidecar.wait(WAIT) == 2
    finally:
        _kill(sidecar)
    # The early process may be stopped before its interpreter even wrote its pid, so it is
    # looked for by its own argument (the fifo's path), not waited for.
    assert "popen" in _events(tmp_path / "stderr")  # it did start early
    assert _none_running_with(str(fifo)), "an upstream of an invalid config was left running"


def _none_running_with(argument: str) -> bool:
    """No live process (zombies aside) has `argument` on its command line, within WAIT."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if not any(_live_with(entry, argument) for entry in Path("/proc").iterdir() if entry.name.isdigit()):
            return True
        time.sleep(0.02)
    return False


def _live_with(entry: Path, argument: str) -> bool:
    try:
        if argument.encode() not in (entry / "cmdline").read_bytes().split(b"\0"):
            return False
        return not (entry / "stat").read_text().split(") ", 1)[1].startswith("Z")
    except (OSError, IndexError):
        return False


def test_the_upstream_starts_before_the_runtime_loads_and_is_adopted(tmp_path: Path) -> None:
    server = REPO / "tests" / "upstreams" / "fault_server.py"
    config = _config(tmp_path, {"a": {"command": sys.executable, "args": [str(server)]}})
    sidecar = _start([sys.executable, "-c", _WATCHED, "--config", str(config)], tmp_path / "stderr")
    try:
        assert sidecar.stdin is not None and sidecar.stdout is not None
        sidecar.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
                            b'"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
                            b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
                            b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n')
        sidecar.stdin.flush()
        listed = _reply(sidecar, 2)
        assert "a__echo" in {tool["name"] for tool in listed["result"]["tools"]}
        sidecar.stdin.close()
        assert sidecar.wait(WAIT) == 0
    finally:
        _kill(sidecar)
    events = _events(tmp_path / "stderr")
    assert events.count("popen") == 1, events  # started once, early, and adopted: not started again
    for module in ("msgspec", "sidecar.config", "asyncio", "sidecar.app"):
        assert events.index("popen") < events.index(f"import {module}"), events


def test_help_starts_nothing(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", _WATCHED, "--help"], cwd=REPO, capture_output=True, timeout=WAIT)
    assert done.returncode == 0 and b"EVENT popen" not in done.stderr


def _reply(process: subprocess.Popen[bytes], ident: int) -> dict[str, Any]:
    """The answer to request `ident`, read from the raw pipe (a buffered reader would hide
    lines it already holds from `select`)."""
    assert process.stdout is not None
    fd, buffer = process.stdout.fileno(), b""
    while True:
        while b"\n" not in buffer:
            assert select.select([fd], [], [], WAIT)[0], "no answer from the sidecar"
            chunk = os.read(fd, 1 << 20)
            assert chunk, "the sidecar closed its stdout"
            buffer += chunk
        line, buffer = buffer.split(b"\n", 1)
        message = json.loads(line)
        if message.get("id") == ident:
            return message  # type: ignore[no-any-return]


def _events(stderr: Path) -> list[str]:
    return [line.removeprefix("EVENT ") for line in stderr.read_text().splitlines() if line.startswith("EVENT ")]


def _kill(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(WAIT)


@pytest.mark.parametrize("setpriv", [True, False], ids=["setpriv", "preexec_fn"])
def test_each_way_of_asking_for_the_death_signal_works(tmp_path: Path, setpriv: bool) -> None:
    """With setpriv (vfork) and without it (the child's own prctl): a parent killed with
    SIGKILL takes its upstream along."""
    entry, fifo = _deaf_upstream(tmp_path)
    parent_code = ("import sys\n"
                   "from sidecar.upstream import spawn\n"
                   f"{'' if setpriv else 'spawn._found.append(None)'}\n"
                   "spawn.start_launch(spawn.Launch(sys.argv[1], tuple(sys.argv[2:]), (), None))\n"
                   "sys.stdin.read()\n")
    parent = _start([sys.executable, "-c", parent_code, entry["command"], *entry["args"]], tmp_path / "stderr")
    try:
        upstream = _read_pid(fifo)
        parent.send_signal(signal.SIGKILL)
        parent.wait(WAIT)
        assert _wait_gone(upstream), "the upstream outlived its parent"
    finally:
        _kill(parent)
