"""Ask a sidecar which tool names its face lists, through the command-line contract alone.

A shim that must name tools to the engine before the turn (Claude Code's pre-allowed
tools, Codex's per-tool approvals) starts `omb-sidecar --config PATH` on a config holding
only the servers whose tools it must name, speaks MCP over stdio (initialize, then
tools/list page by page), and stops it (stdin closed, then SIGTERM, then SIGKILL). The
names come from the sidecar itself, so its naming rules (prefixes, shortening, digests)
are never copied here. Bounded by a deadline; a failure means "no names".
"""

from __future__ import annotations

import json
import logging
import os
import selectors
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["ProbeError", "face_tool_names"]

log = logging.getLogger(__name__)

_PROTOCOL = "2025-06-18"
_MAX_PAGES = 100


class ProbeError(Exception):
    """The sidecar did not answer as the contract says, in time."""


class _Peer:
    def __init__(self, argv: Sequence[str], env: Mapping[str, str], deadline: float) -> None:
        self.deadline = deadline
        self.process = subprocess.Popen(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=dict(env), start_new_session=True,
        )
        self._buffer = b""
        self._selector = selectors.DefaultSelector()
        assert self.process.stdout is not None
        self._selector.register(self.process.stdout, selectors.EVENT_READ)

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, ident: int, method: str, params: dict[str, Any]) -> Any:
        self.send({"id": ident, "method": method, "params": params})
        while True:
            frame = self._next_frame()
            if frame.get("id") == ident and "method" not in frame:
                if "error" in frame:
                    raise ProbeError(f"{method} failed: {frame['error'].get('message', '')}")
                return frame.get("result")

    def _next_frame(self) -> dict[str, Any]:
        while b"\n" not in self._buffer:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0 or not self._selector.select(remaining):
                raise ProbeError("the sidecar did not answer in time")
            assert self.process.stdout is not None
            chunk = os.read(self.process.stdout.fileno(), 65536)
            if not chunk:
                raise ProbeError("the sidecar closed its output")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            frame = json.loads(line)
        except ValueError:
            return {}
        return frame if isinstance(frame, dict) else {}

    def close(self) -> None:
        self._selector.close()
        try:
            assert self.process.stdin is not None
            self.process.stdin.close()
        except OSError:
            pass
        for action in (None, self.process.terminate, self.process.kill):
            if action is not None:
                action()
            try:
                self.process.wait(3)
                break
            except subprocess.TimeoutExpired:
                continue
        if self.process.stdout is not None:
            self.process.stdout.close()


def face_tool_names(
    command: Sequence[str], config: Path, env: Mapping[str, str], timeout: float = 30.0
) -> list[str]:
    """The names of every tool the face at `config` lists (raises ProbeError)."""
    peer = _Peer([*command, "--config", str(config)], env, time.monotonic() + timeout)
    try:
        peer.request(1, "initialize", {
            "protocolVersion": _PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "omb-shim-probe", "version": "1"},
        })
        peer.send({"method": "notifications/initialized"})
        return _list_all(peer)
    finally:
        peer.close()


def _list_all(peer: _Peer) -> list[str]:
    names: list[str] = []
    cursor: str | None = None
    for page in range(_MAX_PAGES):
        result = peer.request(2 + page, "tools/list", {"cursor": cursor} if cursor else {})
        tools = result.get("tools") if isinstance(result, dict) else None
        if not isinstance(tools, list):
            raise ProbeError("tools/list answered without a tools array")
        names.extend(t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str))
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            return names
    raise ProbeError("tools/list kept paging")
