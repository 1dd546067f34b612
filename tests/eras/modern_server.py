"""A 2026-07-28-only MCP upstream on the `mcp` SDK's low-level server, over Streamable
HTTP on loopback: its tools answer with an input-required result (the revision's way to
ask the client something) and finish when called again with the answers and the state.
A thin ASGI layer refuses `initialize`, as a server without the session revisions does.

    python tests/eras/modern_server.py [--events FILE]

Prints `PORT <n>`; the endpoint is `/mcp`. Tools:
    form {}      asks a form (key "who"); returns the name
    url {}       asks a URL-mode elicitation; returns the action
    sample {}    asks sampling; returns the text
    roots {}     asks roots; returns the URIs
    chain {}     asks a form, then (second round, its state "2") sampling; returns both
    forever {}   asks again on every round
    echo {nonce} no question
    progress_ask {}  reports progress, asks a form; on the next round reports again and ends
    hang {}      waits until cancelled (its events say so)
Prompt `ask_prompt`: asks a form first, then is the prompt "a prompt for <name>".
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from typing import Any

warnings.simplefilter("ignore")

import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp.server.context import ServerRequestContext  # noqa: E402
from mcp.server.lowlevel import Server  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # the checkout
from tests.upstreams.event_file import Events  # noqa: E402
from tests.upstreams.loopback import serve_2026_only  # noqa: E402

NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
TOOLS = [{"name": n, "description": f"The modern test tool {n}.", "inputSchema": {"type": "object", "properties": {}}}
         for n in ("form", "url", "sample", "roots", "chain", "forever", "echo", "progress_ask", "hang")]


def _text(value: str) -> types.TextContent:
    return types.TextContent(type="text", text=value)


def _form(message: str) -> types.ElicitRequest:
    return types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema=NAME_FORM))


def _sampling(prompt: str) -> types.CreateMessageRequest:
    message = types.SamplingMessage(role="user", content=_text(prompt))
    return types.CreateMessageRequest(params=types.CreateMessageRequestParams(messages=[message], max_tokens=16))


def _dump(value: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = value.model_dump(mode="json", by_alias=True, exclude_none=True) if hasattr(value, "model_dump") \
        else dict(value)
    return dumped



class ModernUpstream:
    def __init__(self, events: Events) -> None:
        self.events = events

    async def list_tools(self, ctx: ServerRequestContext, params: Any) -> dict[str, Any]:
        return {"tools": TOOLS, "resultType": "complete", "ttlMs": 0, "cacheScope": "private"}

    async def call_tool(self, ctx: ServerRequestContext,
                        params: types.CallToolRequestParams) -> types.CallToolResult | types.InputRequiredResult:
        answers = {k: _dump(v) for k, v in (params.input_responses or {}).items()}
        self.events.emit("call", tool=params.name, state=params.request_state, answers=answers)
        if params.name == "progress_ask":
            await ctx.session.report_progress(1 if "who" not in answers else 2, 2, "round")
            if "who" not in answers:
                return types.InputRequiredResult(input_requests={"who": _form("Your name?")}, request_state="1")
            return types.CallToolResult(content=[_text(f"progress_ask: {answers['who']['content']['name']}")])
        if params.name == "hang":
            try:
                await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                self.events.emit("cancelled", tool="hang")
                raise
        return self._round(params.name, answers, params.request_state, params.arguments or {})

    def _round(self, name: str, answers: dict[str, Any], state: str | None,
               args: dict[str, Any]) -> types.CallToolResult | types.InputRequiredResult:
        if name == "echo":
            return types.CallToolResult(content=[_text(str(args.get("nonce", "")))])
        if name == "forever":
            return types.InputRequiredResult(input_requests={"who": _form("Again?")}, request_state="again")
        asks: dict[str, Any] = {
            "form": _form("Your name?"),
            "url": types.ElicitRequest(params=types.ElicitRequestURLParams(
                message="Sign in", url="https://example.com/signin", elicitation_id="e-1")),
            "sample": _sampling("ping"),
            "roots": types.ListRootsRequest(),
            "chain": _form("First, your name?"),
        }
        if name not in asks:
            raise MCPError(code=-32602, message=f"Unknown tool: {name}")
        if name == "chain" and state == "1" and "who" in answers:
            return types.InputRequiredResult(input_requests={"model": _sampling("greet")}, request_state="2")
        if name == "chain" and state == "2" and "model" in answers:
            return types.CallToolResult(content=[_text(f"chain: {answers['model']['content']['text']}")])
        if "who" not in answers:
            return types.InputRequiredResult(input_requests={"who": asks[name]}, request_state="1")
        return types.CallToolResult(content=[_text(f"{name}: {json.dumps(answers['who'], sort_keys=True)}")])

    async def list_prompts(self, ctx: ServerRequestContext, params: Any) -> dict[str, Any]:
        return {"prompts": [{"name": "ask_prompt", "description": "A prompt that asks for a name first."}],
                "resultType": "complete", "ttlMs": 0, "cacheScope": "private"}

    async def get_prompt(self, ctx: ServerRequestContext,
                         params: types.GetPromptRequestParams) -> types.GetPromptResult | types.InputRequiredResult:
        answers = {k: _dump(v) for k, v in (params.input_responses or {}).items()}
        self.events.emit("prompt", name=params.name, state=params.request_state)
        if "who" not in answers:
            return types.InputRequiredResult(input_requests={"who": _form("Whose prompt?")}, request_state="p1")
        name = answers["who"]["content"]["name"]
        message = types.PromptMessage(role="user", content=_text(f"a prompt for {name}"))
        return types.GetPromptResult(messages=[message])

    def build(self) -> Server:
        return Server("modern-server", version="1.0.0", on_list_tools=self.list_tools, on_call_tool=self.call_tool,
                      on_list_prompts=self.list_prompts, on_get_prompt=self.get_prompt)


if __name__ == "__main__":
    serve_2026_only(lambda events: ModernUpstream(events).build())
