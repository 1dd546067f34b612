"""A session-era (2025-11-25 handshake) MCP upstream on the `mcp` SDK's low-level server,
stdio, whose tools ask the client something in the middle of a call.

    python tests/eras/era_server.py [--events FILE]

Tools:
    form {message?}   elicitation/create, form mode; returns the answer as JSON
    url {}            elicitation/create, URL mode; returns the action
    sample {prompt}   sampling/createMessage; returns the model's text
    roots {}          roots/list; returns the URIs as JSON
    twice {}          asks a form, then samples; returns both
    forever {}        asks a form again and again until an answer is refused
    echo {nonce}      no question: returns the nonce
    progress_ask {}   reports progress, then asks a form, then reports again
    ask_then_hang {}  asks a form, then waits until cancelled
    linked_ask {message, link, after?}  asks a form whose `_meta` names its call: by the
                      call's progress token (link "token") or by the call's request id
                      (link "request", `io.modelcontextprotocol/related-request`); with
                      `after`, only once the question of that message has been asked

With `--events FILE` one JSON object a line is appended: every question's outcome
(answered or refused, with the error's words), every call's cancellation and end.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from typing import Any

warnings.simplefilter("ignore")  # sampling, roots and elicitation are deprecated at 2026-07-28

import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp.server.context import ServerRequestContext  # noqa: E402
from mcp.server.lowlevel import NotificationOptions, Server  # noqa: E402
from mcp.server.stdio import stdio_server  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # the checkout
from tests.upstreams.event_file import Events  # noqa: E402

NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def _text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def _tool(name: str, props: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "description": f"The era test tool {name}.",
            "inputSchema": {"type": "object", "properties": props or {}}}


TOOLS = [_tool("form", {"message": {"type": "string"}}), _tool("url"), _tool("sample", {"prompt": {"type": "string"}}),
         _tool("roots"), _tool("twice"), _tool("forever"), _tool("echo", {"nonce": {"type": "string"}}),
         _tool("progress_ask"), _tool("ask_then_hang"),
         _tool("linked_ask", {"message": {"type": "string"}, "link": {"type": "string"}, "after": {"type": "string"}})]
RELATED_REQUEST = "io.modelcontextprotocol/related-request"



class EraUpstream:
    def __init__(self, events: Events) -> None:
        self.events = events
        self.asked: dict[str, anyio.Event] = {}  # linked_ask's questions, by message, once put

    async def list_tools(self, ctx: ServerRequestContext, params: Any) -> dict[str, Any]:
        return {"tools": TOOLS}

    async def call_tool(self, ctx: ServerRequestContext, params: types.CallToolRequestParams) -> dict[str, Any]:
        args = params.arguments or {}
        self.events.emit("call", tool=params.name)
        try:
            result = await self._run(ctx, params.name, args)
        except anyio.get_cancelled_exc_class():
            self.events.emit("cancelled", tool=params.name)
            raise
        except MCPError as exc:
            self.events.emit("failed", tool=params.name, message=exc.error.message)
            raise
        self.events.emit("done", tool=params.name)
        return result

    async def _asked(self, what: str, question: Any) -> Any:
        try:
            answer = await question
        except MCPError as exc:
            self.events.emit("refused", what=what, code=exc.error.code, message=exc.error.message)
            raise
        self.events.emit("answered", what=what)
        return answer

    async def _form(self, ctx: ServerRequestContext, message: str) -> types.ElicitResult:
        asking = ctx.session.elicit_form(message, NAME_FORM, related_request_id=ctx.request_id)
        answer: types.ElicitResult = await self._asked("form", asking)
        return answer

    async def _sample(self, ctx: ServerRequestContext, prompt: str) -> str:
        message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))
        asking = ctx.session.create_message([message], max_tokens=32, related_request_id=ctx.request_id)
        reply = await self._asked("sample", asking)
        content = reply.content
        return content.text if isinstance(content, types.TextContent) else json.dumps(content.model_dump())

    async def _run(self, ctx: ServerRequestContext, name: str, args: dict[str, Any]) -> dict[str, Any]:
        if name == "form":
            answer = await self._form(ctx, str(args.get("message", "Who are you?")))
            return {"content": [_text(json.dumps({"action": answer.action, "content": answer.content}))]}
        if name == "url":
            asking = ctx.session.elicit_url("Sign in to the example service", "https://example.com/signin?x=1",
                                            "elicit-1", related_request_id=ctx.request_id)
            answer = await self._asked("url", asking)
            return {"content": [_text(f"url:{answer.action}")]}
        if name == "sample":
            return {"content": [_text("sampled: " + await self._sample(ctx, str(args.get("prompt", ""))))]}
        if name == "roots":
            roots = await self._asked("roots", ctx.session.list_roots())
            return {"content": [_text(json.dumps([str(r.uri) for r in roots.roots]))]}
        if name == "twice":
            first = await self._form(ctx, "First, your name?")
            said = await self._sample(ctx, f"greet {(first.content or {}).get('name')}")
            return {"content": [_text(f"twice: {(first.content or {}).get('name')} / {said}")]}
        if name == "forever":
            rounds = 0
            while True:
                rounds += 1
                try:
                    await self._form(ctx, f"Question {rounds}?")
                except MCPError:
                    return {"content": [_text(f"stopped after {rounds} questions")], "isError": True}
        if name == "echo":
            return {"content": [_text(str(args.get("nonce", "")))]}
        if name == "progress_ask":
            await ctx.session.report_progress(1, 2, "before the question")
            answer = await self._form(ctx, "Halfway: your name?")
            await ctx.session.report_progress(2, 2, "after the question")
            return {"content": [_text(f"progress_ask: {(answer.content or {}).get('name')}")]}
        if name == "linked_ask":
            return await self._linked_ask(ctx, args)
        if name == "ask_then_hang":
            await self._form(ctx, "Before the long part: your name?")
            await anyio.sleep_forever()
        raise MCPError(code=-32602, message=f"Unknown tool: {name}")

    async def _linked_ask(self, ctx: ServerRequestContext, args: dict[str, Any]) -> dict[str, Any]:
        message = str(args.get("message", "?"))
        if args.get("after"):
            await self.asked.setdefault(str(args["after"]), anyio.Event()).wait()
        if args.get("link") == "token":
            sent: Any = ctx.meta or {}
            meta: dict[str, Any] = {"progressToken": sent.get("progressToken", sent.get("progress_token"))}
        else:
            meta = {RELATED_REQUEST: {"requestId": ctx.request_id}}
        params = types.ElicitRequestFormParams(message=message, requested_schema=NAME_FORM, **{"_meta": meta})
        asking = ctx.session.send_request(types.ElicitRequest(params=params), types.ElicitResult)
        self.asked.setdefault(message, anyio.Event()).set()  # set before the answer: `after` waits on the asking
        answer: types.ElicitResult = await self._asked("linked", asking)
        return {"content": [_text(f"{message}: {(answer.content or {}).get('name')}")]}

    def build(self) -> Server:
        return Server("era-server", version="1.0.0", on_list_tools=self.list_tools, on_call_tool=self.call_tool)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", default=None)
    options = parser.parse_args()
    upstream = EraUpstream(Events(options.events))
    server = upstream.build()
    init = server.create_initialization_options(NotificationOptions(tools_changed=True))
    async with stdio_server() as (read, write):
        await server.run(read, write, init)


if __name__ == "__main__":
    try:
        anyio.run(main)
    except KeyboardInterrupt:
        sys.exit(0)
