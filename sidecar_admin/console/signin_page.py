"""Sign in from any browser (filled in below)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

__all__ = ["SignIn"]


class SignIn:
    def __init__(self, console: Any) -> None:
        self.console = console

    def add_routes(self, router: web.UrlDispatcher) -> None:
        return None
