"""Canary secrets (header values, env values, the listener's token) appear nowhere they
must not: not in the debug log, not in anything the engine receives (answers, errors),
not on the command line of the sidecar or of any of its children, in plain form or
base64-, percent- or JSON-escaped.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import urllib.parse
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest
from fake_upstream import FakeUpstream, serve_fake
from http_support import HttpSidecar, http_sidecar  # noqa: F401 - fixture

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

HEADER_CANARY = "hdr+Canary/91f0=x&y z"
AUTH_CANARY = "auth-Canary-5d2e8c7b"
ENV_CANARY = "env-Canary-a1b2c3d4e5"
TOKEN_CANARY = "listener-Canary-token-0f9e8d7c"


def forms(secret: str) -> set[str]:
    raw = secret.encode()
    found = {secret, json.dumps(secret)[1:-1], urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret),
             base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode(),
             base64.b64encode(raw).decode().rstrip("=")}
    return {f for f in found if len(f) >= 6}


def leaks(text: str) -> list[str]:
    return [f"{secret!r} as {form!r}" for secret in (HEADER_CANARY, AUTH_CANARY, ENV_CANARY, TOKEN_CANARY)
            for form in forms(secret) if form in text]


def family(pid: int) -> list[int]:
    """The pid and every descendant, from /proc."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo += parents.get(current, [])
    return found


def command_lines(pid: int) -> str:
    lines = []
    for member in family(pid):
        try:
            lines.append(Path(f"/proc/{member}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            pass
    return "\n".join(lines)


async def exchange(sc: HttpSidecar, body: dict[str, Any], session: str | None) -> str:
    headers = sc.headers(**({"Mcp-Session-Id": session} if session else {}))
    async with aiohttp.ClientSession() as client:
        async with client.post(sc.url, json=body, headers=headers) as response:
            text = await response.text()
            return text + json.dumps(dict(response.headers))


async def test_canaries_reach_no_log_no_answer_no_command_line(http_sidecar, sdk_server_entry, tmp_path: Path):
    fake = FakeUpstream(status_for={"boom": 401}, error_text=f"rejected {HEADER_CANARY} and {AUTH_CANARY}")
    async with serve_fake(fake) as web:
        headers = {"X-Api-Key": HEADER_CANARY, "Authorization": f"Bearer {AUTH_CANARY}"}
        config = {"bot": {"id": "canary"}, "face": {"listWaitSeconds": 20}, "mcpServers": {
            "kid": sdk_server_entry("kid", "p_", env={"SDK_CANARY": ENV_CANARY}),
            "web": {"type": "http", "url": web.url, "headers": headers},
            "gone": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X-Gone": HEADER_CANARY}},
        }}
        path = tmp_path / "sidecar.json"
        path.write_text(json.dumps(config))
        async with http_sidecar(path, token=TOKEN_CANARY, log_level="DEBUG") as sc:
            seen = await engine_session(sc)
            argv = command_lines(sc.process.pid)
            os.kill(sc.process.pid, signal.SIGTERM)
            with anyio.fail_after(20):
                await sc.process.wait()
            log = sc.stderr
    assert "web__fail" in seen and "rejected" in seen, seen[-2000:]
    assert "nonce-from-kid" in seen, "the stdio upstream answered (answers only are collected, not requests)"
    assert "sidecar" in argv and "sdk_server.py" in argv
    assert "you sent [redacted]" in seen, "a credential the server echoes back is taken out"
    assert not leaks(seen), leaks(seen)
    assert not leaks(log), leaks(log)
    assert not leaks(argv), leaks(argv)
    assert any(r.headers.get("X-Api-Key") == HEADER_CANARY for r in fake.requests), "the upstream did get its header"


async def engine_session(sc: HttpSidecar) -> str:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "canary", "version": "1"}}}
    async with aiohttp.ClientSession() as client:
        async with client.post(sc.url, json=init, headers=sc.headers()) as response:
            session = response.headers["Mcp-Session-Id"]
            seen = [await response.text()]
    calls = [("tools/list", {}), ("tools/call", {"name": "kid__p_echo", "arguments": {"nonce": "nonce-from-kid"}}),
             ("tools/call", {"name": "web__echo", "arguments": {"text": "t"}}),
             ("tools/call", {"name": "web__fail", "arguments": {}}),
             ("tools/call", {"name": "web__boom", "arguments": {}}),
             ("tools/call", {"name": "web__whoami", "arguments": {}}),
             ("tools/call", {"name": "gone__echo", "arguments": {}})]
    for number, (method, params) in enumerate(calls, start=2):
        seen.append(await exchange(sc, {"jsonrpc": "2.0", "id": number, "method": method, "params": params}, session))
    return "\n".join(seen)
