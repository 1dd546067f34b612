"""A stdio upstream's pipes are closed once each, by their transports, on both event loops.

uvloop closes a pipe's number in libuv and then closes the file object it was handed:
twice, the second time possibly another thread's file that took the number in between
(`sidecar.upstream.pipes`). The first test watches each pipe's file object as it is
closed (still open, still the same pipe: else something closed its number before it);
the second counts, with strace, the closes of a real sidecar whose upstream dies and
comes back, and finds none that hit a number already closed.
"""

from __future__ import annotations

import ast
import asyncio
import io
import os
import re
import shutil
import signal
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import anyio
import pytest
import uvloop

from sidecar.upstream.spawn import Launch, Spawned, start_launch, stop_process
from sidecar.upstream.stdio import adopt

REPO = Path(__file__).resolve().parents[2]
ECHO = "import sys\nfor line in sys.stdin.buffer:\n    sys.stdout.buffer.write(line); sys.stdout.buffer.flush()\n"


class _WatchedPipe(io.FileIO):
    """A pipe end that notes, when it is closed, whether its number was still this pipe."""

    def __init__(self, fd: int, mode: str) -> None:
        super().__init__(fd, mode)
        self.identity = _identity(fd)
        self.found_at_close: object = "never closed"

    def close(self) -> None:
        if not self.closed:
            try:
                self.found_at_close = "this pipe" if _identity(self.fileno()) == self.identity else "another file"
            except OSError as error:
                self.found_at_close = f"closed already ({error.strerror})"
        super().close()


def _identity(fd: int) -> tuple[int, int]:
    stat = os.fstat(fd)
    return stat.st_dev, stat.st_ino


def _watched(popen: Spawned) -> list[_WatchedPipe]:
    """Swap the process's three pipe objects for watched ones on the same pipes."""
    pipes = []
    for name, mode in (("stdin", "wb"), ("stdout", "rb"), ("stderr", "rb")):
        stream = getattr(popen, name)
        pipe = _WatchedPipe(os.dup(stream.fileno()), mode)
        stream.close()
        setattr(popen, name, pipe)
        pipes.append(pipe)
    return pipes


async def _echo_once_and_stop(popen: Spawned) -> bytes:
    lines: asyncio.Queue[bytes] = asyncio.Queue()
    child = await adopt(popen, lines.put_nowait, 1 << 16)
    child._write_now(b"hello\n")
    line = await asyncio.wait_for(lines.get(), 10)
    await child.stop(grace=5)
    await asyncio.sleep(0.05)  # the transports' closes run on the loop's next turns
    return line


RUNNERS: dict[str, Callable[[Coroutine[Any, Any, Any]], Any]] = {"asyncio": asyncio.run, "uvloop": uvloop.run}


@pytest.mark.parametrize("loop_name", sorted(RUNNERS))
def test_each_pipe_is_still_its_own_when_its_transport_closes_it(loop_name: str) -> None:
    """And none is left open: what the loop was handed in their stead, it closed."""
    run = RUNNERS[loop_name]
    run(asyncio.sleep(0))  # a loop's first run may keep descriptors for the process (libuv's signal lock)
    open_before = _open_descriptors()
    popen = start_launch(Launch(sys.executable, ("-c", ECHO), (), None))
    if not isinstance(popen, Spawned):  # Popen's pipes are buffered objects: watch the posix_spawn kind
        stop_process(popen)
        pytest.skip("no setpriv here: the process was started by subprocess.Popen")
    pipes = _watched(popen)
    try:
        assert run(_echo_once_and_stop(popen)) == b"hello"
    finally:
        stop_process(popen)
    assert [pipe.found_at_close for pipe in pipes] == ["this pipe"] * 3
    del popen, pipes
    assert _open_descriptors() == open_before


def _open_descriptors() -> dict[int, str]:
    """Each open descriptor and what it is (the listing's own, closed by now, left out)."""
    found = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            found[int(name)] = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue
    return found


@pytest.mark.e2e
@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
async def test_a_restarting_upstream_never_closes_a_closed_number(tmp_path: Path, raw_process, write_config,
                                                                  fault_server_entry, sidecar_argv) -> None:
    """The sidecar's loop thread (its first thread, the one strace follows without -f),
    through an upstream killed twice and restarted, then a shutdown: every close() of it
    closes an open descriptor."""
    trace = tmp_path / "close.trace"
    config = write_config({"a": fault_server_entry("name=a")})
    argv = ["strace", "-qq", "-y", "-e", "trace=close", "-e", "signal=none", "-o", str(trace), *sidecar_argv(config)]
    async with raw_process(argv) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["a__pid"])
        for _ in range(2):
            os.kill(int(_text(await sc.call("a__pid"))), signal.SIGKILL)
            with anyio.fail_after(10):
                while "result" not in (answer := await sc.call("a__echo", {"nonce": "back"})) \
                        or answer["result"].get("isError"):
                    await anyio.sleep(0.05)
        await sc.close_stdin()
        assert await sc.wait_exit(timeout=20) == 0
    deadline = time.monotonic() + 5
    while not trace.exists() and time.monotonic() < deadline:
        await anyio.sleep(0.05)
    closes = re.findall(r"^close\((\d+)(?:<[^>]*>)?\)\s+= (.*)$", trace.read_text(), re.MULTILINE)
    assert len(closes) > 20, "strace saw too few closes to judge"
    assert [number for number, result in closes if "EBADF" in result] == []


def _text(response: dict[str, Any]) -> str:
    return "".join(c.get("text", "") for c in response["result"]["content"])


def test_every_pipe_reaches_the_loop_through_for_the_loop() -> None:
    """The one door (docs/architecture.md): each `connect_read_pipe`/`connect_write_pipe` in
    the sidecar is given `for_the_loop(...)`, directly or through a name bound to it in the
    same function."""
    calls = wrong = 0
    for path in sorted((REPO / "sidecar").rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            handed = {target.id for node in ast.walk(function) if isinstance(node, ast.Assign)
                      and _is_handing(node.value) for target in node.targets if isinstance(target, ast.Name)}
            for node in ast.walk(function):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr in ("connect_read_pipe", "connect_write_pipe")):
                    calls += 1
                    pipe = node.args[1]
                    if not (_is_handing(pipe) or isinstance(pipe, ast.Name) and pipe.id in handed):
                        wrong += 1
                        print(f"{path.relative_to(REPO)}:{node.lineno}: a pipe handed to the loop by itself")
    assert calls >= 5 and wrong == 0


def _is_handing(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "for_the_loop"
