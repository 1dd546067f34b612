"""Stdio children: spawn with an explicit environment, frame stdout, keep stderr short,
and shut down in order (close stdin, wait, SIGTERM, SIGKILL) so no child is left behind.

Owns the child's process, its pipes and its process group. Refuses to pass on any of
the parent's environment beyond a small allow-list (RELIABILITY rule 12).
"""

from __future__ import annotations

import asyncio
import collections
import ctypes
import logging
import os
import signal
import sys
from collections.abc import Callable, Mapping

from sidecar.config import ServerConfig
from sidecar.wire import LineFramer, Outbox

__all__ = ["ChildProcess", "spawn_child", "child_environment", "INHERITED_VARIABLES"]

log = logging.getLogger(__name__)

INHERITED_VARIABLES = (
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE",
    "TERM", "TMPDIR", "TZ", "SYSTEMROOT", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE",
    "SSL_CERT_DIR", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME",
    "VIRTUAL_ENV",
)
STDERR_KEEP = 64 * 1024
EXIT_DRAIN_SECONDS = 0.2
_PR_SET_PDEATHSIG = 1


def child_environment(server: ServerConfig, parent: Mapping[str, str]) -> dict[str, str]:
    """The allow-listed parent variables, then the server's own configured ones."""
    env = {k: parent[k] for k in INHERITED_VARIABLES if k in parent}
    env.update(server.env)
    return env


def _die_with_parent() -> None:
    """In the child before exec: get SIGTERM if the sidecar dies without cleaning up."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


class _ChildProtocol(asyncio.SubprocessProtocol):
    def __init__(self, on_line: Callable[[bytes], None], framer: LineFramer) -> None:
        self.on_line = on_line
        self.framer = framer
        self.stderr_tail: collections.deque[bytes] = collections.deque()
        self.stderr_size = 0
        loop = asyncio.get_running_loop()
        self.exited: asyncio.Future[None] = loop.create_future()
        # Gone: stdout closed, or the process exited and a short drain time passed (a
        # grandchild may hold stdout open after the child itself died).
        self.gone: asyncio.Future[None] = loop.create_future()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 1:
            for line in self.framer.feed(data):
                self.on_line(line)
        else:
            self._keep_stderr(data)

    def _keep_stderr(self, data: bytes) -> None:
        self.stderr_tail.append(data[-STDERR_KEEP:])
        self.stderr_size += len(self.stderr_tail[-1])
        while self.stderr_size > STDERR_KEEP and len(self.stderr_tail) > 1:
            self.stderr_size -= len(self.stderr_tail.popleft())

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            self._set_gone()

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)
        asyncio.get_running_loop().call_later(EXIT_DRAIN_SECONDS, self._set_gone)

    def _set_gone(self) -> None:
        if not self.gone.done():
            self.gone.set_result(None)


class ChildProcess:
    """A running stdio upstream; write frames in, lines come out through `on_line`."""

    def __init__(self, transport: asyncio.SubprocessTransport, protocol: _ChildProtocol) -> None:
        self._transport = transport
        self._protocol = protocol
        self.pid: int = transport.get_pid()
        self._stdin = transport.get_pipe_transport(0)
        self._outbox = Outbox(self._write_now, asyncio.get_running_loop())

    @property
    def exited(self) -> asyncio.Future[None]:
        return self._protocol.exited

    @property
    def gone(self) -> asyncio.Future[None]:
        """Done when no more output can come: stdout closed, or exited and drained."""
        return self._protocol.gone

    @property
    def returncode(self) -> int | None:
        return self._transport.get_returncode()

    def diagnostics(self) -> str:
        """The tail of the child's stderr (kept for logs, never sent to the engine)."""
        return b"".join(self._protocol.stderr_tail).decode("utf-8", "replace")

    def describe_end(self) -> str:
        code = self.returncode
        return "stopped" if code is None else f"stopped (exit code {code})"

    def write(self, data: bytes) -> None:
        self._outbox(data)

    def _write_now(self, data: bytes) -> None:
        stdin = self._stdin
        if stdin is not None and not stdin.is_closing():
            stdin.write(data)  # type: ignore[attr-defined]

    async def stop(self, grace: float = 2.0) -> None:
        """Close stdin, wait; SIGTERM the group, wait; SIGKILL the group. Never raises."""
        if self._stdin is not None:
            self._stdin.close()
        for sig in (None, signal.SIGTERM, signal.SIGKILL):
            if sig is not None:
                self._signal_group(sig)
            try:
                await asyncio.wait_for(asyncio.shield(self.exited), grace)
                break
            except asyncio.TimeoutError:
                continue
        self._signal_group(signal.SIGKILL)  # stray grandchildren of the group go too
        self._transport.close()

    def _signal_group(self, sig: int) -> None:
        try:
            os.killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


async def spawn_child(
    server: ServerConfig, on_line: Callable[[bytes], None], max_line: int
) -> ChildProcess:
    """Start the server's command in its own process group with an explicit environment."""
    assert server.command is not None
    loop = asyncio.get_running_loop()
    framer = LineFramer(max_line)
    transport, protocol = await loop.subprocess_exec(
        lambda: _ChildProtocol(on_line, framer),
        server.command,
        *server.args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=child_environment(server, os.environ),
        cwd=server.cwd,
        start_new_session=True,
        preexec_fn=_die_with_parent if sys.platform == "linux" else None,
    )
    return ChildProcess(transport, protocol)
