"""A well-behaved MCP upstream built on the `mcp` SDK's low-level server (stdio).

The tests start it as a child of the sidecar (or directly, to check a fixture).
Everything it offers carries its configured name, so two instances started with
different `--name`/`--prefix` can be told apart in any answer.

    python tests/upstreams/sdk_server.py [--name NAME] [--prefix P] [--events FILE]
        [--startup-delay S] [--page-size N] [--filler-tools N] [--filler-desc-chars N]
        [--hostile-catalog]

Every option can also come from the environment: SDK_SERVER_NAME, SDK_SERVER_PREFIX,
SDK_SERVER_EVENTS, SDK_SERVER_STARTUP_DELAY, SDK_SERVER_PAGE_SIZE,
SDK_SERVER_FILLER_TOOLS, SDK_SERVER_FILLER_DESC_CHARS, SDK_SERVER_HOSTILE_CATALOG=1.

Tools (each name is `<prefix><tool>`):

    echo {nonce, text?}        -> text: the nonce; structuredContent {nonce, server, text}
    add {a, b}                 -> text: a+b
    slow {seconds, nonce?}     -> progress every 0.1 s (when asked for), honours cancellation
    sample {prompt, maxTokens?}-> asks the client for sampling/createMessage, returns its text
    elicit {message?}          -> asks the client for elicitation/create, returns the answer as JSON
    roots {}                   -> asks the client for roots/list, returns the URIs as JSON
    log {level?, message}      -> sends notifications/message, then answers "logged"
    set_tools {names}          -> replaces the extra (dynamic) tools, sends tools/list_changed
    touch {uri?}               -> sends notifications/resources/updated for a resource
    fail {message, rpc?}       -> an isError result, or (rpc=true) a JSON-RPC error -32042
    big {chars}                -> one text block of exactly `chars` characters
    records {count}            -> JSON text: a list of `count` records (for the result budget)
    getenv {name}              -> the value of an environment variable, or null as JSON
    pid {}                     -> this process's pid

Resources: `sdk://<name>/static/hello` (static text), template `sdk://<name>/items/{id}`.
Prompts: `<prefix>greet {name}` and `<prefix>plain`. Completion: prompt `greet`
argument `name`, template argument `id`.

With `--events FILE`, one JSON object a line is appended for: start (pid), every
request and notification received (method, id), call start/end, cancellation seen,
log level set, subscription changes. Tests read it as the upstream's side of the story.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from typing import Any

warnings.simplefilter("ignore")  # the SDK flags sampling/roots/logging as deprecated in 2026-07-28

import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp.server.context import ServerRequestContext  # noqa: E402
from mcp.server.lowlevel import NotificationOptions, Server  # noqa: E402
from mcp.server.stdio import stdio_server  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

GREETING_NAMES = ["alice", "alfred", "bob", "carol", "carlos"]
ITEM_IDS = ["1", "2", "3", "10", "42"]


def _env_default(var: str, fallback: str) -> str:
    return os.environ.get(var, fallback)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="scripted MCP upstream on the mcp SDK")
    p.add_argument("--name", default=_env_default("SDK_SERVER_NAME", "sdk-server"))
    p.add_argument("--prefix", default=_env_default("SDK_SERVER_PREFIX", ""))
    p.add_argument("--events", default=os.environ.get("SDK_SERVER_EVENTS"))
    p.add_argument("--startup-delay", type=float, default=float(_env_default("SDK_SERVER_STARTUP_DELAY", "0")))
    p.add_argument("--page-size", type=int, default=int(_env_default("SDK_SERVER_PAGE_SIZE", "0")))
    p.add_argument("--filler-tools", type=int, default=int(_env_default("SDK_SERVER_FILLER_TOOLS", "0")))
    p.add_argument("--filler-desc-chars", type=int, default=int(_env_default("SDK_SERVER_FILLER_DESC_CHARS", "60")))
    p.add_argument(
        "--hostile-catalog",
        action="store_true",
        default=os.environ.get("SDK_SERVER_HOSTILE_CATALOG") == "1",
    )
    return p.parse_args(argv)


class Events:
    """Append-only JSON-lines record of what this upstream saw."""

    def __init__(self, path: str | None) -> None:
        self._path = path

    def emit(self, event: str, **fields: Any) -> None:
        if not self._path:
            return
        record = {"event": event, "t": time.time(), "pid": os.getpid(), **fields}
        line = json.dumps(record, default=str) + "\n"
        # One write per record in append mode, so concurrent writers never interleave a line.
        fd = os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _obj(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return schema


class SdkUpstream:
    def __init__(self, opts: argparse.Namespace) -> None:
        self.opts = opts
        self.name: str = opts.name
        self.prefix: str = opts.prefix
        self.events = Events(opts.events)
        self.dynamic_tools: list[str] = []
        self.subscriptions: set[str] = set()
        self.log_level = "debug"
        self.static_uri = f"sdk://{self.name}/static/hello"
        self.template_uri = f"sdk://{self.name}/items/{{id}}"

    # ---- catalog -------------------------------------------------------------------------

    def base_tools(self) -> list[dict[str, Any]]:
        s = {"type": "string"}
        n = {"type": "number"}
        tools: list[dict[str, Any]] = [
            {
                "name": "echo",
                "description": f"Echo the nonce back (server {self.name}).",
                "inputSchema": _obj({"nonce": s, "text": s}, ["nonce"]),
                "outputSchema": _obj({"nonce": s, "server": s, "text": s}, ["nonce", "server"]),
                "annotations": {"readOnlyHint": True},
            },
            {"name": "add", "description": "Add two numbers.", "inputSchema": _obj({"a": n, "b": n}, ["a", "b"])},
            {
                "name": "slow",
                "description": "Wait `seconds`, reporting progress every 0.1 s; stops when cancelled.",
                "inputSchema": _obj({"seconds": n, "nonce": s}, ["seconds"]),
            },
            {
                "name": "sample",
                "description": "Ask the client to sample a model (sampling/createMessage).",
                "inputSchema": _obj({"prompt": s, "maxTokens": {"type": "integer"}}, ["prompt"]),
            },
            {
                "name": "elicit",
                "description": "Ask the user for a name (elicitation/create).",
                "inputSchema": _obj({"message": s}),
            },
            {"name": "roots", "description": "Ask the client for its roots (roots/list).", "inputSchema": _obj({})},
            {
                "name": "log",
                "description": "Send a log message notification.",
                "inputSchema": _obj({"level": s, "message": s}, ["message"]),
            },
            {
                "name": "set_tools",
                "description": "Replace the extra tools of this server and announce the change.",
                "inputSchema": _obj({"names": {"type": "array", "items": s}}, ["names"]),
            },
            {
                "name": "touch",
                "description": "Announce that a resource changed (notifications/resources/updated).",
                "inputSchema": _obj({"uri": s}),
            },
            {
                "name": "fail",
                "description": "Fail: an error result, or a JSON-RPC error when rpc is true.",
                "inputSchema": _obj({"message": s, "rpc": {"type": "boolean"}}, ["message"]),
            },
            {
                "name": "big",
                "description": "Return one text block of exactly `chars` characters.",
                "inputSchema": _obj({"chars": {"type": "integer"}}, ["chars"]),
            },
            {
                "name": "records",
                "description": "Return a JSON list of `count` records.",
                "inputSchema": _obj({"count": {"type": "integer"}}, ["count"]),
            },
            {
                "name": "getenv",
                "description": "Return an environment variable of this process (JSON, null when unset).",
                "inputSchema": _obj({"name": s}, ["name"]),
            },
            {"name": "pid", "description": "Return this process's id.", "inputSchema": _obj({})},
        ]
        for i in range(self.opts.filler_tools):
            words = f"filler tool {i} of {self.name} covering area {i % 7}. "
            desc = (words * (self.opts.filler_desc_chars // len(words) + 1))[: self.opts.filler_desc_chars]
            tools.append(
                {
                    "name": f"filler_{i:03d}",
                    "description": desc,
                    "inputSchema": _obj({"value": {"type": "string", "description": f"value {i}"}}),
                }
            )
        if self.opts.hostile_catalog:
            tools.append(
                {
                    "name": "odd_desc",
                    "description": "bell\x07 escape\x1b[31m rtl\u202eevil zero\u200bwidth bom\ufeff end",
                    "inputSchema": _obj({"x": {"type": "string", "description": "nul\x00 in schema"}}),
                }
            )
        for dyn in self.dynamic_tools:
            tools.append(
                {
                    "name": dyn,
                    "description": f"Dynamic tool {dyn}: echoes its nonce.",
                    "inputSchema": _obj({"nonce": s}, ["nonce"]),
                }
            )
        for t in tools:
            t["name"] = self.prefix + t["name"]
        return tools

    def tool_name(self, wire_name: str) -> str | None:
        if not wire_name.startswith(self.prefix):
            return None
        return wire_name[len(self.prefix) :]

    # ---- handlers ------------------------------------------------------------------------

    async def list_tools(self, ctx: ServerRequestContext, params: types.PaginatedRequestParams | None) -> dict:
        tools = self.base_tools()
        size = self.opts.page_size
        if size <= 0:
            return {"tools": tools}
        start = int(params.cursor) if params is not None and params.cursor else 0
        page = tools[start : start + size]
        result: dict[str, Any] = {"tools": page}
        if start + size < len(tools):
            result["nextCursor"] = str(start + size)
        return result

    async def call_tool(self, ctx: ServerRequestContext, params: types.CallToolRequestParams) -> dict:
        args = params.arguments or {}
        base = self.tool_name(params.name)
        self.events.emit("call", tool=params.name, id=ctx.request_id, arguments=args)
        try:
            result = await self._dispatch(ctx, base, args)
        except anyio.get_cancelled_exc_class():
            self.events.emit("cancelled", tool=params.name, id=ctx.request_id, nonce=args.get("nonce"))
            raise
        self.events.emit("done", tool=params.name, id=ctx.request_id)
        return result

    async def _dispatch(self, ctx: ServerRequestContext, base: str | None, args: dict[str, Any]) -> dict:
        session = ctx.session
        if base == "echo" or (base is not None and base in self.dynamic_tools):
            nonce = str(args.get("nonce", ""))
            structured = {"nonce": nonce, "server": self.name, "text": str(args.get("text", ""))}
            if base != "echo":
                return {"content": [_text(nonce)]}
            return {"content": [_text(nonce)], "structuredContent": structured}
        if base == "add":
            total = args["a"] + args["b"]
            if isinstance(total, float) and total.is_integer():
                total = int(total)
            return {"content": [_text(str(total))]}
        if base == "slow":
            seconds = float(args.get("seconds", 1))
            steps = max(1, int(seconds * 10))
            for i in range(1, steps + 1):
                await anyio.sleep(seconds / steps)
                await session.report_progress(i, steps, f"step {i}/{steps}")
            return {"content": [_text(f"slept {seconds} {args.get('nonce', '')}".strip())]}
        if base == "sample":
            reply = await session.create_message(
                [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=args["prompt"]))],
                max_tokens=int(args.get("maxTokens", 64)),
                system_prompt=f"test upstream {self.name}",
                related_request_id=ctx.request_id,
            )
            content = reply.content
            text = content.text if isinstance(content, types.TextContent) else json.dumps(content.model_dump())
            return {"content": [_text(f"sampled[{reply.model}]: {text}")]}
        if base == "elicit":
            answer = await session.elicit_form(
                str(args.get("message", "Who are you?")),
                {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
                related_request_id=ctx.request_id,
            )
            return {"content": [_text(json.dumps({"action": answer.action, "content": answer.content}))]}
        if base == "roots":
            roots = await session.list_roots()
            return {"content": [_text(json.dumps([str(r.uri) for r in roots.roots]))]}
        if base == "log":
            await session.send_log_message(
                args.get("level", "info"), args["message"], logger=self.name, related_request_id=ctx.request_id
            )
            return {"content": [_text("logged")]}
        if base == "set_tools":
            self.dynamic_tools = [str(n) for n in args.get("names", [])]
            await session.send_tool_list_changed()
            return {"content": [_text(json.dumps(self.dynamic_tools))]}
        if base == "touch":
            await session.send_resource_updated(str(args.get("uri", self.static_uri)))
            return {"content": [_text("touched")]}
        if base == "fail":
            if args.get("rpc"):
                raise MCPError(code=-32042, message=str(args["message"]))
            return {"content": [_text(str(args["message"]))], "isError": True}
        if base == "big":
            chars = int(args["chars"])
            unit = "0123456789abcdef"
            return {"content": [_text((unit * (chars // len(unit) + 1))[:chars])]}
        if base == "records":
            recs = [
                {"id": i, "name": f"record-{i}", "server": self.name, "tags": ["a", "b"], "score": i * 1.5}
                for i in range(int(args["count"]))
            ]
            return {"content": [_text(json.dumps(recs))]}
        if base == "getenv":
            return {"content": [_text(json.dumps(os.environ.get(str(args["name"]))))]}
        if base == "pid":
            return {"content": [_text(str(os.getpid()))]}
        raise MCPError(code=-32602, message=f"Unknown tool: {base!r}")

    async def list_resources(self, ctx: ServerRequestContext, params: types.PaginatedRequestParams | None) -> dict:
        return {
            "resources": [
                {
                    "uri": self.static_uri,
                    "name": f"{self.prefix}hello",
                    "description": f"A static greeting from {self.name}.",
                    "mimeType": "text/plain",
                }
            ]
        }

    async def list_templates(self, ctx: ServerRequestContext, params: types.PaginatedRequestParams | None) -> dict:
        return {
            "resourceTemplates": [
                {
                    "uriTemplate": self.template_uri,
                    "name": f"{self.prefix}item",
                    "description": f"Items of {self.name} by id.",
                    "mimeType": "text/plain",
                }
            ]
        }

    async def read_resource(self, ctx: ServerRequestContext, params: types.ReadResourceRequestParams) -> dict:
        uri = str(params.uri)
        if uri == self.static_uri:
            text = f"hello from {self.name}"
        else:
            head = f"sdk://{self.name}/items/"
            if not uri.startswith(head) or not uri[len(head) :]:
                raise MCPError(code=-32002, message=f"Resource not found: {uri}")
            text = f"item {uri[len(head):]} from {self.name}"
        return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": text}]}

    async def subscribe(self, ctx: ServerRequestContext, params: types.SubscribeRequestParams) -> dict:
        self.subscriptions.add(str(params.uri))
        self.events.emit("subscribe", uri=str(params.uri))
        return {}

    async def unsubscribe(self, ctx: ServerRequestContext, params: types.UnsubscribeRequestParams) -> dict:
        self.subscriptions.discard(str(params.uri))
        self.events.emit("unsubscribe", uri=str(params.uri))
        return {}

    async def list_prompts(self, ctx: ServerRequestContext, params: types.PaginatedRequestParams | None) -> dict:
        return {
            "prompts": [
                {
                    "name": f"{self.prefix}greet",
                    "description": f"Greet someone ({self.name}).",
                    "arguments": [{"name": "name", "description": "who to greet", "required": True}],
                },
                {"name": f"{self.prefix}plain", "description": f"A prompt without arguments ({self.name})."},
            ]
        }

    async def get_prompt(self, ctx: ServerRequestContext, params: types.GetPromptRequestParams) -> dict:
        base = self.tool_name(params.name)
        args = params.arguments or {}
        if base == "greet":
            if "name" not in args:
                raise MCPError(code=-32602, message="Missing required argument: name")
            text = f"Hello {args['name']}, from {self.name}."
        elif base == "plain":
            text = f"A plain prompt from {self.name}."
        else:
            raise MCPError(code=-32602, message=f"Unknown prompt: {params.name}")
        return {"description": f"{params.name} of {self.name}", "messages": [{"role": "user", "content": _text(text)}]}

    async def complete(self, ctx: ServerRequestContext, params: types.CompleteRequestParams) -> dict:
        ref = params.ref
        arg = params.argument
        values: list[str] = []
        if isinstance(ref, types.PromptReference) and self.tool_name(ref.name) == "greet" and arg.name == "name":
            values = [v for v in GREETING_NAMES if v.startswith(arg.value)]
        elif isinstance(ref, types.ResourceTemplateReference) and ref.uri == self.template_uri and arg.name == "id":
            values = [v for v in ITEM_IDS if v.startswith(arg.value)]
        return {"completion": {"values": values, "total": len(values), "hasMore": False}}

    async def set_level(self, ctx: ServerRequestContext, params: types.SetLevelRequestParams) -> dict:
        self.log_level = params.level
        self.events.emit("set_level", level=params.level)
        return {}

    async def roots_changed(self, ctx: ServerRequestContext, params: Any) -> None:
        self.events.emit("notification", method="notifications/roots/list_changed")

    def build(self) -> Server:
        server = Server(
            self.name,
            version="1.0.0",
            instructions=f"Test upstream {self.name}.",
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_list_resources=self.list_resources,
            on_list_resource_templates=self.list_templates,
            on_read_resource=self.read_resource,
            on_subscribe_resource=self.subscribe,
            on_unsubscribe_resource=self.unsubscribe,
            on_list_prompts=self.list_prompts,
            on_get_prompt=self.get_prompt,
            on_completion=self.complete,
            on_set_logging_level=self.set_level,
            on_roots_list_changed=self.roots_changed,
        )
        # Replace the default (no-op without an exporter) OpenTelemetry middleware with a
        # recorder of every inbound message, notifications/cancelled included.
        server.middleware = [self.record_inbound]
        return server

    async def record_inbound(self, ctx: ServerRequestContext, call_next: Any) -> Any:
        kind = "notification" if ctx.request_id is None else "request"
        fields: dict[str, Any] = {"method": ctx.method}
        if ctx.request_id is not None:
            fields["id"] = ctx.request_id
        if ctx.method in ("initialize", "notifications/cancelled", "notifications/initialized"):
            fields["params"] = ctx.params
        self.events.emit(kind, **fields)
        return await call_next(ctx)


async def main(argv: list[str] | None = None) -> None:
    opts = parse_args(argv)
    upstream = SdkUpstream(opts)
    upstream.events.emit("start", name=opts.name, argv=sys.argv[1:])
    if opts.startup_delay > 0:
        await anyio.sleep(opts.startup_delay)
    server = upstream.build()
    init = server.create_initialization_options(
        NotificationOptions(tools_changed=True, resources_changed=True, prompts_changed=True)
    )
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, init)
    upstream.events.emit("exit")


if __name__ == "__main__":
    try:
        anyio.run(main)
    except KeyboardInterrupt:
        pass
