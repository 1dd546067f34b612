"""Starting a stdio upstream's process, with no event loop needed.

Owns the command's launch: its own process group, an explicit environment (an
allow-list of the parent's variables plus the server's own, RELIABILITY rule 12), and a
death signal should the sidecar die without cleaning up. Because it needs no event loop
and imports little, the CLI starts every stdio upstream here first thing, before the
rest of the sidecar has loaded, so the upstreams' own start-up overlaps the sidecar's;
the supervisor then adopts each early process for its first start.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Iterable, Mapping

from sidecar.config import ServerConfig

__all__ = ["INHERITED_VARIABLES", "child_environment", "discard_early", "start_early", "start_process",
           "started_early", "take_early"]

INHERITED_VARIABLES = (
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE",
    "TERM", "TMPDIR", "TZ", "SYSTEMROOT", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE",
    "SSL_CERT_DIR", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME",
    "VIRTUAL_ENV",
)
_PR_SET_PDEATHSIG = 1
_early: dict[str, tuple[ServerConfig, subprocess.Popen[bytes]]] = {}


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


def start_process(server: ServerConfig) -> subprocess.Popen[bytes]:
    """Start the server's command with pipes on stdin, stdout and stderr. OSError if it cannot."""
    assert server.command is not None
    return subprocess.Popen(
        [server.command, *server.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_environment(server, os.environ),
        cwd=server.cwd,
        start_new_session=True,
        preexec_fn=_die_with_parent if sys.platform == "linux" else None,
    )


def start_early(servers: Iterable[ServerConfig]) -> None:
    """Start every stdio upstream now; one that cannot start is left to its supervisor."""
    for server in servers:
        if server.type == "stdio" and server.command and server.alias not in _early:
            try:
                _early[server.alias] = (server, start_process(server))
            except OSError:
                continue


def started_early(server: ServerConfig) -> bool:
    """Whether `start_early` started this entry's process (not yet taken by its supervisor)."""
    found = _early.get(server.alias)
    return found is not None and found[0] == server


def take_early(server: ServerConfig) -> subprocess.Popen[bytes] | None:
    """The process started early for exactly this entry, once; None otherwise."""
    found = _early.pop(server.alias, None)
    if found is None or found[0] != server:
        return None
    return found[1]


def discard_early() -> None:
    """Stop every early process no supervisor adopted (the sidecar is leaving first)."""
    while _early:
        _, (_, popen) = _early.popitem()
        try:
            os.killpg(popen.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        popen.wait()
