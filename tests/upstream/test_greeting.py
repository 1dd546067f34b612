"""An early process's greeting (`sidecar.upstream.greeting`): what it reads of real upstreams
that behave and misbehave, and that a sidecar whose upstreams were greeted early lists, fails
and times out as one that greeted them itself."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.upstream.greeting import Greeting
from sidecar.upstream.spawn import Launch, start_launch
from tests.conftest import REPO

WAIT = 20.0
FAULT_SERVER = str(REPO / "tests" / "upstreams" / "fault_server.py")


def _greet(*options: str, seconds: float = WAIT) -> tuple[Greeting, subprocess.Popen[bytes]]:
    popen = start_launch(Launch(sys.executable, (FAULT_SERVER, *options), (), None))
    greeting = Greeting(popen, seconds)
    assert greeting.finished(WAIT + seconds)
    return greeting, popen


def _stop(popen: subprocess.Popen[bytes]) -> None:
    os.killpg(popen.pid, signal.SIGKILL)
    popen.wait(WAIT)


@pytest.mark.parametrize("options", [(), ("garbage-on-start=2",), ("notify-before-init",), ("request-before-init",),
                                     ("tool-pages=2",), ("duplicate",), ("unknown-ids",)])
def test_a_working_upstream_is_greeted_whole(options: tuple[str, ...]) -> None:
    greeting, popen = _greet(*options)
    try:
        assert greeting.usable and not greeting.timed_out and greeting.initialize and greeting.tools
        assert json.loads(greeting.initialize)["id"] == greeting.ids[0]
        answer = json.loads(greeting.tools)
        assert answer["id"] == greeting.ids[1] and "echo" in {t["name"] for t in answer["result"]["tools"]}  # a first page
        if "notify-before-init" in options:  # kept for the connection, in order
            assert [json.loads(line)["method"] for line in greeting.replay[:2]] == [
                "notifications/message", "notifications/tools/list_changed"]
        if "garbage-on-start=2" in options:
            assert len(greeting.replay) >= 2
    finally:
        _stop(popen)


def test_an_upstream_that_never_answers_times_out() -> None:
    greeting, popen = _greet("no-init", seconds=0.3)
    try:
        assert greeting.timed_out and greeting.initialize is None
    finally:
        _stop(popen)


@pytest.mark.parametrize("options", [("exit-on-start=3",), ("exit-after-init=3",)])
def test_an_upstream_that_ends_first_is_not_handed_over(options: tuple[str, ...]) -> None:
    greeting, popen = _greet(*options)
    assert not greeting.usable
    popen.wait(WAIT)


def test_a_refused_initialize_is_held_for_the_supervisor_to_read() -> None:
    greeting, popen = _greet("init-error")
    try:  # the error answer is the initialize answer: the supervisor fails the start on it, as ever
        assert greeting.initialize is not None and "error" in json.loads(greeting.initialize)
    finally:
        _stop(popen)


# -- through a real sidecar, early start and greeting on ---------------------------------------


def _listed(tmp_path: Path, options: list[str], **face: Any) -> tuple[set[str], subprocess.Popen[bytes]]:
    config = tmp_path / "sidecar.json"
    config.write_text(json.dumps({"bot": {"id": "t"}, **({"face": face} if face else {}),
                                  "mcpServers": {"a": {"command": sys.executable, "args": [FAULT_SERVER, *options]}}}))
    sidecar = subprocess.Popen([sys.executable, "-m", "sidecar", "--config", str(config)], cwd=REPO,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    assert sidecar.stdin is not None
    sidecar.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
                        b'"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
                        b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
                        b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n')
    sidecar.stdin.flush()
    return {tool["name"] for tool in _answer(sidecar, 2)["result"]["tools"]}, sidecar


@pytest.mark.parametrize("options", [[], ["notify-before-init"], ["request-before-init"], ["tool-pages=2"],
                                     ["garbage-on-start=2"], ["duplicate"]])
def test_a_greeted_upstream_lists_all_its_tools(tmp_path: Path, options: list[str]) -> None:
    names, sidecar = _listed(tmp_path, options)
    try:
        assert {"a__echo", "a__pid", "a__sleep"} <= names
    finally:
        _end(sidecar)


@pytest.mark.parametrize("options", [["init-error"], ["exit-on-start=3"], ["no-init"]])
def test_a_greeted_upstream_that_fails_is_left_out_and_the_sidecar_answers(tmp_path: Path, options: list[str]) -> None:
    names, sidecar = _listed(tmp_path, options, startTimeoutSeconds=1, listWaitSeconds=3)
    try:
        assert not any(name.startswith("a__") for name in names)
    finally:
        _end(sidecar)


def _answer(process: subprocess.Popen[bytes], ident: int) -> dict[str, Any]:
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


def _end(process: subprocess.Popen[bytes]) -> None:
    assert process.stdin is not None
    process.stdin.close()
    try:
        process.wait(WAIT)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(WAIT)


def test_a_duplicated_initialize_answer_is_one_handshake(tmp_path: Path) -> None:
    """A server that answers everything twice gets `initialized` and `tools/list` once."""
    record = tmp_path / "record.jsonl"
    greeting, popen = _greet("duplicate", f"record={record}")
    try:
        assert greeting.usable and greeting.tools is not None
    finally:
        _stop(popen)
    received = [json.loads(json.loads(line)["raw"]).get("method") for line in record.read_text().splitlines()
                if json.loads(line).get("event") == "recv"]
    assert received == ["initialize", "notifications/initialized", "tools/list"]


def test_stopping_an_early_process_lets_its_greeting_finish_before_the_pipes_close() -> None:
    """A greeting still reading when its process is stopped (the plan left it out, the sidecar
    leaves, a cancelled adoption) has stopped reading by the time the pipes' numbers are
    closed and free for another file."""
    from sidecar.upstream.spawn import stop_process

    popen = start_launch(Launch(sys.executable, (FAULT_SERVER, "no-init"), (), None))
    greeting = Greeting(popen, WAIT)
    assert not greeting.finished(0.2)  # still waiting on an upstream that never answers
    stop_process(popen, greeting)
    assert greeting.finished(0) and not greeting.usable and not greeting.timed_out
    assert popen.stdout is not None and popen.stdout.closed


# -- the answers' digest, made as the listing arrives --------------------------------------------

_PREFIX = b'"omb-early-0123456789ab-'
_IDS = (_PREFIX + b'1"', _PREFIX + b'2"')


def _blanked_digest(line: bytes, cuts: list[int]) -> bytes:
    from _blake2 import blake2b

    from sidecar.upstream.greeting import _Blanked

    blanked = _Blanked(blake2b(digest_size=32), _PREFIX)
    at = 0
    for cut in sorted(cuts):
        blanked.feed(line[at:cut])
        at = cut
    blanked.feed(line[at:])
    return bytes(blanked.close().digest())


def _replaced_digest(line: bytes) -> bytes:
    """What the stream must equal where no id overlaps another: the ids replaced, then the length."""
    from _blake2 import blake2b

    for ident in _IDS:
        line = line.replace(ident, b'""')
    return blake2b(line + len(line).to_bytes(8, "little"), digest_size=32).digest()


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from([_IDS[0], _IDS[1], _PREFIX, _PREFIX + b"3\"", _PREFIX + b"1", b'"', b"x", b"12",
                                 b'{"id":', b"-", b"omb-early-"]), max_size=12).map(b"".join),
       st.lists(st.integers(min_value=0, max_value=400), max_size=6))
def test_the_digest_is_the_lines_whatever_pieces_it_comes_in(line: bytes, cuts: list[int]) -> None:
    cuts = [cut for cut in cuts if cut <= len(line)]
    assert _blanked_digest(line, cuts) == _blanked_digest(line, [])
    # no id within another's reach (a marker where each was: no id formed across a removed one)
    if _PREFIX[1:] not in line.replace(_IDS[0], b"\0").replace(_IDS[1], b"\0"):
        assert _blanked_digest(line, cuts) == _replaced_digest(line)


def test_two_starts_digest_the_same_answers_alike_and_a_changed_byte_apart() -> None:
    """The ids, random per start, are blanked: the same answers give the same digest; a
    listing that differs by one byte does not."""
    tools = [{"name": f"t{n}", "description": "d" * 5000} for n in range(300)]
    other = [{**tool, "description": tool["description"] + ("!" if n == 299 else "")} for n, tool in enumerate(tools)]

    def digest(nonce: str, listed: list[dict[str, str]]) -> bytes:
        from _blake2 import blake2b

        from sidecar.upstream.greeting import _Blanked

        prefix = f'"omb-early-{nonce}-'.encode()
        line = json.dumps({"jsonrpc": "2.0", "id": f"omb-early-{nonce}-2", "result": {"tools": listed}}).encode()
        blanked = _Blanked(blake2b(digest_size=32), prefix)
        for at in range(0, len(line), 65536):
            blanked.feed(line[at:at + 65536])
        return bytes(blanked.close().digest())

    assert digest("aaaaaaaaaaaa", tools) == digest("bbbbbbbbbbbb", tools)
    assert digest("aaaaaaaaaaaa", tools) != digest("aaaaaaaaaaaa", other)


def test_the_greeting_wakes_its_waiter_itself_as_it_stops() -> None:
    """`when_finished`: called by the greeting's own thread once it has stopped reading (the
    supervisor's loop is woken with no executor thread waiting on the greeting), or at once
    when it has stopped already; a fault in the waiter's call leaves the thread's end alone."""
    import threading

    popen = start_launch(Launch(sys.executable, (FAULT_SERVER, "no-init"), (), None))
    try:
        greeting = Greeting(popen, 0.5)
        called: list[tuple[str, bool]] = []
        woken = threading.Event()

        def then() -> None:
            called.append((threading.current_thread().name, greeting.finished(0)))
            woken.set()
            raise RuntimeError("the waiter's own fault")

        greeting.when_finished(then)
        assert woken.wait(WAIT) and greeting.finished(WAIT) and greeting.timed_out
        assert called == [(called[0][0], True)] and called[0][0] != threading.current_thread().name
        greeting.when_finished(lambda: called.append(("now", greeting.finished(0))))
        assert called[1:] == [("now", True)]  # stopped already: at once, in the caller's thread
    finally:
        _stop(popen)
