"""The loopback return address of a sign-in: `http://127.0.0.1:<port>/mcp-oauth/callback`.

Owns one small aiohttp server bound to 127.0.0.1 only, for the few minutes a sign-in
lasts. A return with another flow's `state` is answered and ignored (the flow keeps
waiting); the flow's own return, good or bad, ends the wait. The browser tab is told
plainly what happened, and never shown the code. With `--paste` nothing listens: the
port only names the return address.
"""

from __future__ import annotations

import asyncio
import html
import socket
import time

from aiohttp import web

from sidecar.upstream.oauth.discovery import CALLBACK_PATH
from sidecar.upstream.oauth.flow import PendingFlow, SignInError

__all__ = ["Callback", "PortTaken", "open_callback"]

_DONE = "Signed in. You can close this tab and return to the terminal."
_PAGE = "<!doctype html><meta charset=utf-8><title>omb-sidecar sign-in</title><p>{words}</p>"


class PortTaken(Exception):
    pass


class Callback:
    def __init__(self, port: int, runner: web.AppRunner | None) -> None:
        self.port = port
        self._runner = runner
        self._flow: PendingFlow | None = None
        self._result: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def code_for(self, flow: PendingFlow) -> str:
        self._flow = flow
        return await self._result

    async def handle(self, request: web.Request) -> web.Response:
        flow = self._flow
        if flow is None or self._result.done():
            return _page("No sign-in is waiting here.", 404)
        try:
            code = flow.accept(str(request.url), time.time())
        except SignInError as exc:
            if flow.used and not self._result.done():
                self._result.set_exception(exc)
            return _page(f"Not signed in: {exc.words}", 400)
        if not self._result.done():
            self._result.set_result(code)
        return _page(_DONE, 200)

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if not self._result.done():
            self._result.cancel()


def _page(words: str, status: int) -> web.Response:
    return web.Response(text=_PAGE.format(words=html.escape(words)), status=status, content_type="text/html",
                        headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"})


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def open_callback(port: int, listen: bool) -> Callback:
    """Listen on `port` (0: any free one); PortTaken when a fixed port is held."""
    if not listen:
        return Callback(port or _free_port(), None)
    holder = Callback(port, None)
    app = web.Application(client_max_size=16 * 1024)
    app.router.add_get(CALLBACK_PATH, holder.handle)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError:
        sock.close()
        await runner.cleanup()
        raise PortTaken() from None
    sock.listen(16)
    site = web.SockSite(runner, sock)
    await site.start()
    holder.port = sock.getsockname()[1]
    holder._runner = runner
    return holder
