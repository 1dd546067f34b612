"""`sidecar.stdin_ahead`: the entry point's one look at stdin, on real pipes. It reads only
a pipe with bytes waiting, never with traces exported or no upstream started (then the
bytes stay in the pipe for the CLI and the stdio front), and writes the answer whole."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from typing import BinaryIO, NamedTuple

import pytest

from sidecar.stdin_ahead import answer_ahead
from sidecar.wire.plain_hello import Ahead

INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}).encode() + b"\n"
PING = b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n'


class Pipes(NamedTuple):
    stdin: BinaryIO  # the process's side
    stdout: BinaryIO
    engine_in: int  # the engine's side
    engine_out: int

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """In the test's own phase: pytest puts its capture back on sys.stdout between phases."""
        monkeypatch.setattr(sys, "stdin", self.stdin)
        monkeypatch.setattr(sys, "stdout", self.stdout)


@pytest.fixture
def pipes() -> Iterator[Pipes]:
    stdin_read, engine_in = os.pipe()
    engine_out, stdout_write = os.pipe()
    with open(stdin_read, "rb", buffering=0) as stdin, open(stdout_write, "wb", buffering=0) as stdout:
        yield Pipes(stdin, stdout, engine_in, engine_out)
    os.close(engine_in)
    os.close(engine_out)


def _unread(fd: int) -> bytes:
    os.set_blocking(fd, False)
    try:
        return os.read(fd, 1 << 16)
    except BlockingIOError:
        return b""


def test_a_waiting_initialize_is_answered_and_everything_read_is_handed_on(
        pipes: Pipes, monkeypatch: pytest.MonkeyPatch) -> None:
    pipes.install(monkeypatch)
    os.write(pipes.engine_in, INIT + PING)
    assert answer_ahead(1, tracing=False) == Ahead(INIT + PING, True)
    answer = json.loads(_unread(pipes.engine_out))
    assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "omb-sidecar"


@pytest.mark.parametrize("upstreams, tracing", [(1, True), (0, False)])
def test_off_with_traces_or_no_upstream_started(pipes: Pipes, monkeypatch: pytest.MonkeyPatch,
                                                upstreams: int, tracing: bool) -> None:
    pipes.install(monkeypatch)
    os.write(pipes.engine_in, INIT)
    assert answer_ahead(upstreams, tracing) is None
    assert _unread(pipes.stdin.fileno()) == INIT and _unread(pipes.engine_out) == b""


def test_nothing_waiting_is_no_wait_and_another_method_is_handed_on_unanswered(
        pipes: Pipes, monkeypatch: pytest.MonkeyPatch) -> None:
    pipes.install(monkeypatch)
    assert answer_ahead(1, tracing=False) is None  # nothing written yet: no wait, nothing read
    os.write(pipes.engine_in, PING + INIT)
    assert answer_ahead(1, tracing=False) == Ahead(PING + INIT, False)
    assert _unread(pipes.engine_out) == b""
