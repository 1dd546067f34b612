"""Helpers for the console tests: a sidecar with the console on, a plain HTTP client that
logs in and posts forms as a browser would (cookie, Origin, CSRF), an MCP caller, and
headless Chromium driven over the DevTools protocol (aiohttp's websocket client; the
browser is Debian's `chromium`, nothing is downloaded).

Every wait is bounded and waits on a condition; every process started here is stopped.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest

from tests.http.http_support import TOKEN, HttpSidecar, open_http_sidecar

REPO = Path(__file__).resolve().parents[2]
SHIFTY = REPO / "tests" / "trust" / "shifty_server.py"
NOTES = REPO / "sidecar" / "examples" / "notes.py"
SHOTS = REPO / "docs" / "console"
WAIT = 30.0
_CSRF = re.compile(r'name="csrf" value="([^"]+)"')

__all__ = ["ConsoleClient", "Browser", "McpCaller", "open_console", "open_browser", "write_config", "TOKEN",
           "SHIFTY", "NOTES", "SHOTS", "tool"]


def tool(name: str, description: str, **properties: str) -> dict[str, Any]:
    props = {k: {"type": "string", "description": v} for k, v in properties.items()}
    return {"name": name, "description": description, "inputSchema": {"type": "object", "properties": props}}


def write_config(folder: Path, servers: dict[str, Any], console: dict[str, Any] | None = None,
                 **sections: Any) -> Path:
    path = folder / "sidecar.json"
    document = {"bot": {"id": "iris"}, "audit": {"file": str(folder / "audit.jsonl")},
                "console": console if console is not None else {"enabled": True}, "mcpServers": servers, **sections}
    path.write_text(json.dumps(document, indent=2))
    return path


@asynccontextmanager
async def open_console(config: Path, tmp_path: Path) -> AsyncIterator[HttpSidecar]:
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sidecar:
        yield sidecar


class ConsoleClient:
    """A browser's side of the console by plain HTTP: cookies kept, Origin sent."""

    def __init__(self, base: str, behind_tls: bool = False) -> None:
        """`behind_tls`: the console is reached over https in front of it (Secure cookies go back)."""
        self.base = base
        jar = aiohttp.CookieJar(unsafe=True, treat_as_secure_origin=[base] if behind_tls else [])
        self.http = aiohttp.ClientSession(cookie_jar=jar)
        self.csrf = ""

    async def close(self) -> None:
        await self.http.close()

    async def get(self, path: str) -> tuple[int, str]:
        async with self.http.get(self.base + path, allow_redirects=False) as response:
            text = await response.text()
            found = _CSRF.search(text)
            if found and path != "/console/login":
                self.csrf = found.group(1)
            return response.status, text

    async def post(self, path: str, form: dict[str, str], *, origin: str | None = "same",
                   csrf: str | None = "session") -> tuple[int, str]:
        headers = {"Origin": self.base if origin == "same" else origin} if origin is not None else {}
        data = dict(form)
        if csrf is not None:
            data["csrf"] = self.csrf if csrf == "session" else csrf
        async with self.http.post(self.base + path, data=data, headers=headers, allow_redirects=False) as response:
            return response.status, await response.text()

    async def login(self, token: str = TOKEN) -> int:
        status, page = await self.get("/console/login")
        assert status == 200, page
        found = _CSRF.search(page)
        assert found
        status, _ = await self.post("/console/login", {"token": token}, csrf=found.group(1))
        if status == 303:
            await self.get("/console/servers")
        return status


class McpCaller:
    """An engine over Streamable HTTP: one session, tool calls by name."""

    def __init__(self, sidecar: HttpSidecar) -> None:
        self.sidecar = sidecar
        self.http = aiohttp.ClientSession()
        self.session_id = ""
        self.ids = itertools.count(1)

    async def _post(self, message: dict[str, Any]) -> Any:
        headers = self.sidecar.headers(**({"Mcp-Session-Id": self.session_id} if self.session_id else {}))
        async with self.http.post(self.sidecar.url, json=message, headers=headers) as response:
            self.session_id = response.headers.get("Mcp-Session-Id", self.session_id)
            if "id" not in message:
                return None
            text = await response.text()
            if response.content_type == "text/event-stream":
                frames = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
                return next(f for f in frames if f.get("id") == message["id"])
            return json.loads(text)

    async def open(self) -> None:
        await self._post({"jsonrpc": "2.0", "id": next(self.ids), "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        await self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def tools(self) -> set[str]:
        answer = await self._post({"jsonrpc": "2.0", "id": next(self.ids), "method": "tools/list", "params": {}})
        return {t["name"] for t in answer["result"]["tools"]}

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        return await self._post({"jsonrpc": "2.0", "id": next(self.ids), "method": "tools/call",
                                 "params": {"name": name, "arguments": arguments}})

    async def wait_for_tool(self, name: str) -> None:
        with anyio.fail_after(WAIT):
            while name not in await self.tools():
                await anyio.sleep(0.1)

    async def close(self) -> None:
        await self.http.close()


# -- the browser ------------------------------------------------------------------------------


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("Debian's chromium is not installed (./dev test installs it)")
    return found


class Browser:
    """One page of headless Chromium, spoken to over the DevTools protocol."""

    def __init__(self, socket: aiohttp.ClientWebSocketResponse, shots: Path) -> None:
        self.socket = socket
        self.shots = shots
        self.ids = itertools.count(1)
        self.waiting: dict[int, asyncio.Future[Any]] = {}
        self.loads = 0
        self.loaded = asyncio.Event()

    async def read(self) -> None:
        async for message in self.socket:
            frame = json.loads(message.data)
            if "id" in frame and frame["id"] in self.waiting:
                self.waiting.pop(frame["id"]).set_result(frame)
            elif frame.get("method") == "Page.loadEventFired":
                self.loads += 1
                self.loaded.set()

    async def send(self, method: str, **params: Any) -> Any:
        ident = next(self.ids)
        self.waiting[ident] = asyncio.get_running_loop().create_future()
        await self.socket.send_json({"id": ident, "method": method, "params": params})
        with anyio.fail_after(WAIT):
            frame = await self.waiting[ident]
        assert "error" not in frame, frame
        return frame["result"]

    async def _after_load(self, start: int) -> None:
        with anyio.fail_after(WAIT):
            while self.loads <= start:
                self.loaded.clear()
                await self.loaded.wait()

    async def goto(self, url: str) -> None:
        start = self.loads
        await self.send("Page.navigate", url=url)
        await self._after_load(start)

    async def run(self, expression: str) -> Any:
        answer = await self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        return answer["result"].get("value")

    async def click(self, selector: str) -> None:
        """Click a button that submits a form, and wait for the page it leads to."""
        start = self.loads
        assert await self.run(f"(() => {{ const b = document.querySelector({json.dumps(selector)}); "
                              "if (!b) return false; b.click(); return true; })()"), selector
        await self._after_load(start)

    async def fill(self, selector: str, value: str) -> None:
        assert await self.run(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) "
                              f"return false; e.value = {json.dumps(value)}; return true; }})()"), selector

    async def text(self) -> str:
        return str(await self.run("document.body.innerText"))

    async def html(self) -> str:
        return str(await self.run("document.documentElement.outerHTML"))

    async def shot(self, name: str) -> Path:
        answer = await self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        self.shots.mkdir(parents=True, exist_ok=True)
        path = self.shots / f"{name}.png"
        path.write_bytes(base64.b64decode(answer["data"]))
        return path


async def _devtools_port(profile: Path, process: anyio.abc.Process) -> int:
    """Chromium writes its DevTools port into the profile folder once it listens."""
    marker = profile / "DevToolsActivePort"
    with anyio.fail_after(WAIT):
        while not (marker.exists() and marker.read_text().strip()):
            assert process.returncode is None, "chromium exited at start"
            await anyio.sleep(0.05)
    return int(marker.read_text().split()[0])


@asynccontextmanager
async def open_browser(tmp_path: Path) -> AsyncIterator[Browser]:
    profile = tmp_path / "chromium"
    argv = [chromium(), "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-extensions", "--disable-background-networking", "--hide-scrollbars",
            "--window-size=1280,900", f"--user-data-dir={profile}", "--remote-debugging-port=0",
            "about:blank"]
    with open(tmp_path / "chromium.log", "wb") as log:
        process = await anyio.open_process(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                           start_new_session=True)
    try:
        port = await _devtools_port(profile, process)
        async with aiohttp.ClientSession() as http:
            with anyio.fail_after(WAIT):
                async with http.get(f"http://127.0.0.1:{port}/json/list") as response:
                    pages = [t for t in await response.json() if t.get("type") == "page"]
            async with http.ws_connect(pages[0]["webSocketDebuggerUrl"], max_msg_size=0) as socket:
                # the docs' screenshots are written only when asked for, so a test run leaves the checkout clean
                browser = Browser(socket, SHOTS if os.environ.get("OMB_CONSOLE_SHOTS") else tmp_path / "shots")
                reader = asyncio.ensure_future(browser.read())
                try:
                    await browser.send("Page.enable")
                    await browser.send("Runtime.enable")
                    yield browser
                finally:
                    reader.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            process.terminate()
            with anyio.move_on_after(5):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()


def python() -> str:
    return sys.executable
