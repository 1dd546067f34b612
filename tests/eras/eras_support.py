"""Shared pieces of the across-eras tests: the session-era test upstream's config entry,
the SDK client on either revision with callbacks that answer as told and remember what
they were asked, and raw 2026-07-28 requests for the hostile cases."""

from __future__ import annotations

import sys
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import mcp_types as types

HERE = Path(__file__).resolve().parent
ERA_SERVER = HERE / "era_server.py"
MODERN = "2026-07-28"


def era_entry(events: Path | None = None, **extra: Any) -> dict[str, Any]:
    args = [str(ERA_SERVER)] + (["--events", str(events)] if events is not None else [])
    return {"command": sys.executable, "args": args, "pinning": "off", **extra}


class Person:
    """The engine's person and model: answers elicitation, sampling and roots as told."""

    def __init__(self, name: str = "ada", action: str = "accept", stall: bool = False, decision: str = "allow") -> None:
        self.name, self.action, self.stall, self.decision = name, action, stall, decision
        self.asked: list[tuple[str, Any]] = []

    async def elicit(self, ctx: Any, params: Any) -> types.ElicitResult:
        self.asked.append(("elicit", params))
        if self.stall:
            await anyio.sleep_forever()
        if getattr(params, "mode", "form") == "url":
            return types.ElicitResult(action=self.action)
        schema = getattr(params, "requested_schema", None)
        schema = schema.model_dump() if hasattr(schema, "model_dump") else (schema or {})
        if "decision" in (schema.get("properties") or {}):
            return types.ElicitResult(action="accept", content={"decision": self.decision})  # the gate's confirmation
        return types.ElicitResult(action=self.action, content={"name": self.name})

    async def sample(self, ctx: Any, params: Any) -> types.CreateMessageResult:
        self.asked.append(("sample", params))
        said = params.messages[0].content.text
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text=f"hi<{said}>"),
                                         model="test-model")

    async def roots(self, ctx: Any) -> types.ListRootsResult:
        self.asked.append(("roots", None))
        return types.ListRootsResult(roots=[types.Root(uri="file:///work/project", name="project")])


def sdk_client(url: str, token: str, person: Person, mode: str, **kw: Any) -> Any:
    warnings.simplefilter("ignore", DeprecationWarning)
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return Client(streamable_http_client(url, http_client=http), mode=mode, elicitation_callback=person.elicit,
                  sampling_callback=person.sample, list_roots_callback=person.roots, **kw)


def said(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def modern_headers(token: str, name: str, method: str = "tools/call") -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": MODERN,
            "Mcp-Method": method, "Mcp-Name": name}


async def stateless_call(client: aiohttp.ClientSession, url: str, token: str, name: str, arguments: dict[str, Any],
                         *, state: str | None = None, responses: dict[str, Any] | None = None,
                         capabilities: dict[str, Any] | None = None, ident: int = 1,
                         meta: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
    """One raw 2026-07-28 tools/call: (HTTP status, the JSON-RPC message); `meta` joins its `_meta`."""
    caps = {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}} if capabilities is None else capabilities
    params: dict[str, Any] = {"name": name, "arguments": arguments, "_meta": {
        "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": caps,
        **(meta or {})}}
    if state is not None:
        params["requestState"] = state
    if responses is not None:
        params["inputResponses"] = responses
    body = {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}
    with anyio.fail_after(30):
        async with client.post(url, json=body, headers=modern_headers(token, name)) as response:
            message: dict[str, Any] = await response.json(content_type=None)
            return response.status, message


async def wait_for_tools(client: aiohttp.ClientSession, url: str, token: str, name: str = "era__echo") -> None:
    """Raw 2026-07-28 tools/list until `name` is listed (the upstream has started), bounded."""
    body = {"jsonrpc": "2.0", "id": 0, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}}}
    headers = {**modern_headers(token, ""), "Mcp-Method": "tools/list"}
    headers.pop("Mcp-Name")
    with anyio.fail_after(30):
        while True:
            async with client.post(url, json=body, headers=headers) as response:
                listed = (await response.json())["result"]["tools"]
            if any(tool["name"] == name for tool in listed):
                return
            await anyio.sleep(0.05)


async def sdk_wait_for_tools(client: Any, name: str = "era__echo") -> None:
    """The SDK client's tools/list until `name` is listed, bounded."""
    with anyio.fail_after(30):
        while name not in {tool.name for tool in (await client.list_tools()).tools}:
            await anyio.sleep(0.05)


MODERN_SERVER = HERE / "modern_server.py"


@asynccontextmanager
async def open_modern_server(events: Path | None = None) -> AsyncIterator[str]:
    """tests/eras/modern_server.py as a process: yields its endpoint URL."""
    import subprocess

    from tests.conftest import REPO, child_env
    from tests.http.http_support import _read_port, _stop

    argv = [sys.executable, str(MODERN_SERVER)] + (["--events", str(events)] if events is not None else [])
    process = await anyio.open_process(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=child_env(),
                                       cwd=str(REPO), start_new_session=True)
    try:
        yield f"http://127.0.0.1:{await _read_port(process)}/mcp"
    finally:
        await _stop(process)
