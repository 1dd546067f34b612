"""The door the HTTP front keeps for the operator's page (`/console`), and nothing else.

The page itself lives in the admin package (`sidecar_admin.console`), which the runtime
never imports: the CLI hands a `MountConsole` to the front only when `console.enabled` is
set, the way it hands over the health schedule. With it off, no console module loads and
no `/console` route exists.

Owns: what the front gives the page (`ConsoleScene`: the faces by bot id, the whole
config, the listener's settings, the process's redactor), what the page gives back (a
`ConsoleSite` that adds its routes), and which paths are the page's. Refuses nothing
itself: Host and Origin are still judged by the front; the page admits its own callers
by their session cookie instead of the bearer token.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from aiohttp import web

from sidecar.config import SidecarConfig
from sidecar.front.http.listener import FrontSettings
from sidecar.hub.face import Face
from sidecar.redact import Redactor

__all__ = ["CONSOLE_PATH", "ConsoleScene", "ConsoleSite", "MountConsole", "is_console_path"]

CONSOLE_PATH = "/console"


@dataclass(frozen=True)
class ConsoleScene:
    faces: Mapping[str, Face]  # bot id -> its face (one for a single front)
    config: SidecarConfig  # the whole config, before any bot's cut
    settings: FrontSettings
    redactor: Redactor
    gateway: bool = False


class ConsoleSite(Protocol):
    def add_routes(self, app: web.Application) -> None: ...


MountConsole = Callable[[ConsoleScene], ConsoleSite]


def is_console_path(path: str) -> bool:
    return path == CONSOLE_PATH or path.startswith(CONSOLE_PATH + "/")
