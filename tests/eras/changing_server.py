"""An MCP upstream on the `mcp` SDK's low-level server whose lists change when asked, in
either era: session era on stdio (the 2025-11-25 handshake), or `--modern` over
Streamable HTTP on loopback, 2026-07-28 only (its `initialize` refused), where it serves
`subscriptions/listen` unless `--no-listen`.

    python tests/eras/changing_server.py [--modern [--no-listen]] [--events FILE]

Prints `PORT <n>` when `--modern` (the endpoint is `/mcp`); `--hints SCOPE:TTL_MS` are the
caching hints its cacheable results carry at 2026-07-28 (default `private:0`). Tools:
    grow {}       one more tool, prompt and resource (`extra_<n>`, `mem://extra/<n>`);
                  says tools, prompts and resources changed
    grow_tools {} one more tool only; says only the tools changed
    bump {}       the resource `mem://counter` changes; says so (`resources/updated`)
    crash {}      exits at once (a server that dies; its supervisor starts it again)
    end_listens {}  2026-07-28: ends every open listen stream gracefully (as a server going away does)
    url_done {}   session era: asks a URL-mode elicitation (id `elicit-7`), then sends
                  `notifications/elicitation/complete` for it and returns the action
    echo {nonce}  returns the nonce
With `--events FILE`: one JSON line for each subscribe and each listen stream opened.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import Any

warnings.simplefilter("ignore")

import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp.server.context import ServerRequestContext  # noqa: E402
from mcp.server.lowlevel import NotificationOptions, Server  # noqa: E402
from mcp.server.stdio import stdio_server  # noqa: E402
from mcp.server.subscriptions import (  # noqa: E402
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # the checkout
from tests.upstreams.event_file import Events  # noqa: E402

COUNTER = "mem://counter"
BASE_TOOLS = ("grow", "grow_tools", "bump", "url_done", "echo", "end_listens", "crash")


def _text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def _tool(name: str) -> dict[str, Any]:
    return {"name": name, "description": f"The changing test tool {name}.",
            "inputSchema": {"type": "object", "properties": {"nonce": {"type": "string"}}}}



class ChangingUpstream:
    def __init__(self, events: Events, modern: bool, listen: bool, hints: str = "private:0") -> None:
        self.events, self.modern, self.listen = events, modern, listen
        scope, ttl = hints.split(":")
        self.hints: dict[str, Any] = {"ttlMs": int(ttl), "cacheScope": scope}
        self.extra_tools: list[str] = []
        self.extra_others: list[str] = []
        self.counter = 0
        self.bus = InMemorySubscriptionBus()
        self.listen_handler: ListenHandler | None = None

    async def list_tools(self, ctx: ServerRequestContext, params: Any) -> dict[str, Any]:
        return self._done({"tools": [_tool(n) for n in (*BASE_TOOLS, *self.extra_tools)]}, cacheable=True)

    async def list_prompts(self, ctx: ServerRequestContext, params: Any) -> dict[str, Any]:
        prompts = [{"name": n, "description": f"prompt {n}"} for n in ("base", *self.extra_others)]
        return self._done({"prompts": prompts}, cacheable=True)

    async def get_prompt(self, ctx: ServerRequestContext, params: types.GetPromptRequestParams) -> dict[str, Any]:
        return self._done({"messages": [{"role": "user", "content": _text(f"prompt {params.name}")}]})

    async def list_resources(self, ctx: ServerRequestContext, params: Any) -> dict[str, Any]:
        uris = [COUNTER, *(f"mem://extra/{n}" for n in self.extra_others)]
        listed = [{"uri": u, "name": u.rsplit("/", 1)[-1], "mimeType": "text/plain"} for u in uris]
        return self._done({"resources": listed}, cacheable=True)

    async def read_resource(self, ctx: ServerRequestContext, params: types.ReadResourceRequestParams) -> dict[str, Any]:
        uri = str(params.uri)
        text = str(self.counter) if uri == COUNTER else uri
        return self._done({"contents": [{"uri": uri, "mimeType": "text/plain", "text": text}]}, cacheable=True)

    async def subscribe(self, ctx: ServerRequestContext, params: types.SubscribeRequestParams) -> dict[str, Any]:
        self.events.emit("subscribe", uri=str(params.uri))
        return {}

    async def unsubscribe(self, ctx: ServerRequestContext, params: types.UnsubscribeRequestParams) -> dict[str, Any]:
        self.events.emit("unsubscribe", uri=str(params.uri))
        return {}

    def _done(self, result: dict[str, Any], cacheable: bool = False) -> dict[str, Any]:
        """A result as this era wants it: 2026-07-28 says it is complete (and how to cache it)."""
        if not self.modern:
            return result
        return {**result, "resultType": "complete", **(self.hints if cacheable else {})}

    async def call_tool(self, ctx: ServerRequestContext, params: types.CallToolRequestParams) -> dict[str, Any]:
        return self._done(await self._call(ctx, params))

    async def _call(self, ctx: ServerRequestContext, params: types.CallToolRequestParams) -> dict[str, Any]:
        args = params.arguments or {}
        if params.name == "grow":
            name = f"extra_{len(self.extra_tools) + 1}"
            self.extra_tools.append(name)
            self.extra_others.append(name)
            await self._say(ctx, ToolsListChanged(), PromptsListChanged(), ResourcesListChanged())
            return {"content": [_text(name)]}
        if params.name == "grow_tools":
            name = f"extra_{len(self.extra_tools) + 1}"
            self.extra_tools.append(name)
            await self._say(ctx, ToolsListChanged())
            return {"content": [_text(name)]}
        if params.name == "bump":
            self.counter += 1
            await self._say(ctx, ResourceUpdated(uri=COUNTER))
            return {"content": [_text(str(self.counter))]}
        if params.name == "url_done":
            answer = await ctx.session.elicit_url("Sign in", "https://example.com/signin", "elicit-7",
                                                  related_request_id=ctx.request_id)
            await ctx.session.send_elicit_complete("elicit-7", related_request_id=ctx.request_id)
            return {"content": [_text(f"url_done:{answer.action}")]}
        if params.name == "echo":
            return {"content": [_text(str(args.get("nonce", "")))]}
        if params.name == "crash":
            os._exit(3)
        if params.name == "end_listens" and self.listen_handler is not None:
            self.listen_handler.close()
            return {"content": [_text("ended")]}
        raise MCPError(code=-32602, message=f"Unknown tool: {params.name}")

    async def _say(self, ctx: ServerRequestContext, *events: Any) -> None:
        """Each change as this era says it: on the session, or to the listen streams."""
        for event in events:
            if self.modern:
                await self.bus.publish(event)
            elif isinstance(event, ToolsListChanged):
                await ctx.session.send_tool_list_changed()
            elif isinstance(event, PromptsListChanged):
                await ctx.session.send_prompt_list_changed()
            elif isinstance(event, ResourcesListChanged):
                await ctx.session.send_resource_list_changed()
            else:
                await ctx.session.send_resource_updated(event.uri)

    def build(self) -> Server:
        listen = self.listen_handler = ListenHandler(self.bus) if self.modern and self.listen else None

        async def listening(ctx: ServerRequestContext, params: Any) -> Any:
            assert listen is not None
            self.events.emit("listen", filter=params.notifications.model_dump(by_alias=True, exclude_none=True))
            return await listen(ctx, params)

        return Server("changing-server", version="1.0.0", on_list_tools=self.list_tools, on_call_tool=self.call_tool,
                      on_list_prompts=self.list_prompts, on_get_prompt=self.get_prompt,
                      on_list_resources=self.list_resources, on_read_resource=self.read_resource,
                      on_subscribe_resource=None if self.modern else self.subscribe,
                      on_unsubscribe_resource=None if self.modern else self.unsubscribe,
                      on_subscriptions_listen=listening if listen is not None else None)


async def _serve_modern(server: Server) -> None:
    from tests.upstreams.loopback import refusing_initialize, serve_on_loopback

    app = refusing_initialize(server.streamable_http_app())
    await serve_on_loopback(app)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", default=None)
    parser.add_argument("--modern", action="store_true")
    parser.add_argument("--no-listen", action="store_true")
    parser.add_argument("--hints", default="private:0", help="SCOPE:TTL_MS on every cacheable result (2026-07-28)")
    options = parser.parse_args()
    server = ChangingUpstream(Events(options.events), options.modern, not options.no_listen, options.hints).build()
    if options.modern:
        await _serve_modern(server)
        return
    changes = NotificationOptions(tools_changed=True, prompts_changed=True, resources_changed=True)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options(changes))


if __name__ == "__main__":
    try:
        anyio.run(main)
    except KeyboardInterrupt:
        sys.exit(0)
