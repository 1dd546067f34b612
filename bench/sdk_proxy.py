"""A plain stdio MCP proxy on the mcp SDK's client and low-level server.

Owns the "what you get in a few dozen lines" peer: it spawns one upstream
(the command after `--`), connects to it with `mcp.ClientSession`, lists its
tools once, then serves those tools over stdio with `mcp.server.lowlevel.Server`,
forwarding every `tools/call` to the upstream session. Tool names stay bare.

It refuses everything a real proxy would do (several upstreams, list_changed,
budgets, cancellation relay): it is a peer to measure, not a product.

`python bench/sdk_proxy.py -- CMD ARG...`
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp_types as types
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

__all__ = ["main", "serve"]


def _proxy_server(upstream: ClientSession, tools: types.ListToolsResult) -> Server[Any]:
    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return tools

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        result = await upstream.call_tool(params.name, params.arguments)
        assert isinstance(result, types.CallToolResult)
        return result

    return Server("bench-sdk-proxy", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve(command: list[str]) -> None:
    """Connect to the upstream, then serve its tools on this process's stdio."""
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(params) as (up_read, up_write), ClientSession(up_read, up_write) as upstream:
        await upstream.initialize()
        server = _proxy_server(upstream, await upstream.list_tools())
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    command = args[1:] if args[:1] == ["--"] else args
    if not command:
        sys.exit("usage: sdk_proxy.py -- CMD ARG...")
    anyio.run(serve, command)


if __name__ == "__main__":
    main()
