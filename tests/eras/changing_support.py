"""Shared pieces of the list-change tests across eras: the changing upstream
(tests/eras/changing_server.py) in either era, and an engine's record of the
notifications it heard."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from tests.conftest import REPO, child_env
from tests.http.http_support import _read_port, _stop

CHANGING_SERVER = Path(__file__).resolve().parent / "changing_server.py"
COUNTER = "mem://counter"
LIST_CHANGES = ("notifications/tools/list_changed", "notifications/prompts/list_changed",
                "notifications/resources/list_changed")


def session_entry(events: Path | None = None) -> dict[str, Any]:
    """The session-era changing upstream on stdio, as a config entry."""
    args = [str(CHANGING_SERVER)] + (["--events", str(events)] if events is not None else [])
    return {"command": sys.executable, "args": args, "pinning": "off"}


@asynccontextmanager
async def open_stateless_server(events: Path | None = None, *, listen: bool = True,
                                hints: str = "private:0") -> AsyncIterator[str]:
    """The 2026-07-28-only changing upstream over HTTP: yields its endpoint URL."""
    argv = [sys.executable, str(CHANGING_SERVER), "--modern", "--hints", hints] + ([] if listen else ["--no-listen"])
    argv += ["--events", str(events)] if events is not None else []
    process = await anyio.open_process(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=child_env(),
                                       cwd=str(REPO), start_new_session=True)
    try:
        yield f"http://127.0.0.1:{await _read_port(process)}/mcp"
    finally:
        await _stop(process)


def method_of(message: Any) -> str | None:
    method = getattr(message, "method", None)
    return method if isinstance(method, str) else None


class Heard:
    """What an SDK client's message handler was told (as the stdio client's list is too)."""

    def __init__(self) -> None:
        self.notes: list[Any] = []

    async def __call__(self, message: Any) -> None:
        if method_of(message) is not None:
            self.notes.append(message)


async def heard_then(notes: list[Any], mark: int, method: str, check: Callable[[], Awaitable[bool]],
                     timeout: float = 30) -> Any:
    """Wait (bounded) until `method` was heard after index `mark` of `notes` and `check`
    holds after it (a change announced, then seen by listing again); that message."""
    with anyio.fail_after(timeout):
        while True:
            found = [m for m in notes[mark:] if method_of(m) == method]
            if found and await check():
                return found[-1]
            await anyio.sleep(0.02)  # the notes are appended by another task: polled


async def sdk_names(client: Any) -> tuple[set[str], set[str], set[str]]:
    """Tool, prompt and resource names as the SDK client lists them."""
    tools = {tool.name for tool in (await client.list_tools()).tools}
    prompts = {prompt.name for prompt in (await client.list_prompts()).prompts}
    resources = {str(resource.uri) for resource in (await client.list_resources()).resources}
    return tools, prompts, resources
