"""The client the official conformance suite's client scenarios drive: the sidecar, with the
suite's server as its only upstream, and a small engine on the sidecar's stdio that does
what each scenario asks a client to do. What the suite judges is what reaches its server:
the sidecar's own requests as an MCP client.

    python tests/http/conformance_client.py <server-url>

The suite runs it with the scenario in `MCP_CONFORMANCE_SCENARIO` (and, for some, the
calls to make in `MCP_CONFORMANCE_CONTEXT`). The engine (the mcp SDK's client, at the
session revision) lists the tools, then calls what the scenario names; it answers an
elicitation by accepting the form's defaults, a sampling request with a short text, and
roots with one root. The sidecar's log goes to this process's stderr.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

warnings.simplefilter("ignore")

import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

CALLS: dict[str, list[tuple[str, dict[str, Any]]]] = {  # scenario -> the calls its server expects
    "tools_call": [("add_numbers", {"a": 5, "b": 3})],
    "elicitation-sep1034-client-defaults": [("test_client_elicitation_defaults", {})],
}
SEPARATE = "omb-conformance"  # the face's name; tools keep their own names (bareNames)


def config(url: str, folder: Path) -> Path:
    path = folder / "sidecar.json"
    path.write_text(json.dumps({
        "bot": {"id": "conformance-client", "engine": "claude"},
        "face": {"name": SEPARATE, "bareNames": True, "listWaitSeconds": 10},
        "mcpServers": {"suite": {"type": "http", "url": url, "pinning": "off"}},
    }))
    return path


async def elicit(ctx: Any, params: Any) -> types.ElicitResult:
    """Accept with every default the form offers (SEP-1034)."""
    schema = getattr(params, "requested_schema", None) or {}
    defaults = {k: v["default"] for k, v in (schema.get("properties") or {}).items() if "default" in v}
    return types.ElicitResult(action="accept", content=defaults or {"name": "conformance"})


async def sample(ctx: Any, params: Any) -> types.CreateMessageResult:
    return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="Paris"),
                                     model="conformance-engine", stop_reason="endTurn")


async def roots(ctx: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///conformance", name="conformance")])


def planned(scenario: str, tools: list[types.Tool]) -> list[tuple[str, dict[str, Any]]]:
    """The calls to make: the scenario's context, its known calls, or (for the schema
    round trip) the focal tool's schema echoed back."""
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if context.get("toolCalls"):
        return [(c["name"], c.get("arguments") or {}) for c in context["toolCalls"]]
    if scenario == "json-schema-2020-12-preservation":
        focal = next(t for t in tools if t.name == "json_schema_2020_12_tool")
        echo = next(t for t in tools if "echo" in t.name)
        return [(echo.name, {"schema": focal.input_schema})]
    if scenario in CALLS:
        return CALLS[scenario]
    return [(t.name, {}) for t in tools]  # every tool once: the scenarios that watch requests


async def drive(url: str, scenario: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        argv = [sys.executable, "-m", "sidecar", "--config", str(config(url, Path(folder)))]
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
        async with stdio_client(params, errlog=sys.stderr) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=20, sampling_callback=sample,
                                     elicitation_callback=elicit, list_roots_callback=roots) as session:
                await session.initialize()
                tools = (await session.list_tools()).tools
                for name, arguments in planned(scenario, tools):
                    result = await session.call_tool(name, arguments)
                    print(json.dumps({"called": name, "isError": result.is_error}), flush=True)
                if scenario == "http-standard-headers":
                    await _resources_and_prompts(session)


async def _resources_and_prompts(session: ClientSession) -> None:
    for resource in (await session.list_resources()).resources[:1]:
        await session.read_resource(resource.uri)
    for prompt in (await session.list_prompts()).prompts[:1]:
        await session.get_prompt(prompt.name, {})


if __name__ == "__main__":
    anyio.run(drive, sys.argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", ""))
