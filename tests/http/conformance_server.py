"""An MCP server offering what the official conformance suite's server scenarios ask
for, served over Streamable HTTP (or legacy SSE) on loopback with the mcp SDK.

    python tests/http/conformance_server.py [--transport http|sse] [--port N] [--era both|session|stateless]

`--era both` (the default) serves 2025-11-25 sessions and the stateless 2026-07-28
wire; `--era session` refuses 2026-07-28 requests, as a server of the session
revisions only does, and its asking tools ask their client mid-call instead;
`--era stateless` refuses `initialize`, as a 2026-07-28-only server does (both by
`conformance_era`).

It binds 127.0.0.1 (port 0 picks a free one), then prints `PORT <n>` on stdout. The
Streamable HTTP endpoint is `/mcp`; in SSE mode the stream is `/sse`.

The names are the suite's: tools `test_simple_text`, `test_image_content`,
`test_audio_content`, `test_embedded_resource`, `test_multiple_content_types`,
`test_tool_with_logging`, `test_tool_with_progress`, `test_error_handling`,
`test_sampling`, `test_elicitation`, `test_elicitation_sep1034_defaults`,
`test_elicitation_sep1330_enums`, `json_schema_2020_12_tool`; resources
`test://static-text`, `test://static-binary`, `test://watched-resource`, the template
`test://template/{id}/data`; prompts `test_simple_prompt`, `test_prompt_with_arguments`,
`test_prompt_with_embedded_resource`, `test_prompt_with_image`; completion; logging;
the input-required tools and prompt of `conformance_asks`.
"""

from __future__ import annotations

import argparse
import base64
import json
import struct
import sys
import warnings
import zlib
from typing import Any

warnings.simplefilter("ignore")  # sampling/elicitation/logging are deprecated at 2026-07-28

import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp.server.context import ServerRequestContext  # noqa: E402
from mcp.server.lowlevel import Server  # noqa: E402
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity  # noqa: E402
from mcp.server.transport_security import TransportSecuritySettings  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))  # the checkout
from tests.upstreams.loopback import serve_on_loopback  # noqa: E402

from conformance_asks import (ASKING_PROMPTS, ASKING_TOOLS, DIAGNOSTIC_TOOLS, PREFIX, asked_in_session,  # noqa: E402
                              asking_prompt, asking_tool, diagnostic_in_session, diagnostic_tool)
from conformance_era import ERA, one_era  # noqa: E402


def _png() -> str:
    """A 1x1 red PNG, built here rather than pasted."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    raw = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    return base64.b64encode(raw).decode()


def _wav() -> str:
    """A short silent 8 kHz mono WAV."""
    samples = b"\x00\x00" * 80
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 16000, 2, 16)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(samples)) + samples
    return base64.b64encode(b"RIFF" + struct.pack("<I", len(body)) + body).decode()


IMAGE = _png()
AUDIO = _wav()


MODERN = "2026-07-28"
CACHEABLE = {"tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"}


def stamped(ctx: ServerRequestContext, result: dict[str, Any]) -> dict[str, Any]:
    """At 2026-07-28 a result names its type, and cacheable ones carry caching hints."""
    if ctx.protocol_version == MODERN:
        result.setdefault("resultType", "complete")
        if ctx.method in CACHEABLE:
            result.setdefault("ttlMs", 0)
            result.setdefault("cacheScope", "private")
    return result


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def empty_schema() -> dict[str, Any]:
    return {"type": "object", "properties": {}}


SCHEMA_2020_12 = {  # the 2020-12 vocabulary the suite looks for: $anchor, composition, conditionals
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                          "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"},
                   "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                   "phone": {"type": "string"}, "email": {"type": "string"}},
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}

TOOLS: list[dict[str, Any]] = [
    {"name": "test_simple_text", "description": "Answers with one text block", "inputSchema": empty_schema()},
    {"name": "test_image_content", "description": "Answers with an image", "inputSchema": empty_schema()},
    {"name": "test_audio_content", "description": "Answers with audio", "inputSchema": empty_schema()},
    {"name": "test_embedded_resource", "description": "Answers with an embedded resource",
     "inputSchema": empty_schema()},
    {"name": "test_multiple_content_types", "description": "Answers with text, an image and a resource",
     "inputSchema": empty_schema()},
    {"name": "test_tool_with_logging", "description": "Logs three messages while it runs",
     "inputSchema": empty_schema()},
    {"name": "test_tool_with_progress", "description": "Reports progress three times",
     "inputSchema": empty_schema()},
    {"name": "test_error_handling", "description": "Always fails", "inputSchema": empty_schema()},
    {"name": "test_sampling", "description": "Asks the client for a completion",
     "inputSchema": {"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}},
    {"name": "test_elicitation", "description": "Asks the user for input",
     "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}},
    {"name": "test_elicitation_sep1034_defaults", "description": "Asks for input with defaults",
     "inputSchema": empty_schema()},
    {"name": "test_elicitation_sep1330_enums", "description": "Asks for input with enum fields",
     "inputSchema": empty_schema()},
    {"name": "json_schema_2020_12_tool", "description": "Has a JSON Schema 2020-12 input schema",
     "inputSchema": SCHEMA_2020_12},
    *ASKING_TOOLS,
    *DIAGNOSTIC_TOOLS,
]

DEFAULTS_FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"],
                   "default": "active"},
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}

ENUMS_FORM = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "description": "Pick one", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {"type": "string", "description": "Pick one (titled)", "oneOf": [
            {"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"},
            {"const": "value3", "title": "Third Option"}]},
        "legacyEnum": {"type": "string", "description": "Pick one (legacy)", "enum": ["opt1", "opt2", "opt3"],
                       "enumNames": ["Option One", "Option Two", "Option Three"]},
        "untitledMulti": {"type": "array", "description": "Pick some", "minItems": 1, "maxItems": 3,
                          "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {"type": "array", "description": "Pick some (titled)", "minItems": 1, "maxItems": 3,
                        "items": {"anyOf": [{"const": "value1", "title": "First Choice"},
                                            {"const": "value2", "title": "Second Choice"},
                                            {"const": "value3", "title": "Third Choice"}]}},
    },
    "required": [],
}


async def _ask(ctx: ServerRequestContext, method: str, params: dict[str, Any]) -> dict[str, Any]:
    outbound = ctx.session._request_outbound  # the call's own stream, as the spec asks
    return dict(await outbound.send_raw_request(method, params, None))


async def _elicit(ctx: ServerRequestContext, message: str, schema: dict[str, Any]) -> dict[str, Any]:
    try:
        answer = await _ask(ctx, "elicitation/create", {"message": message, "requestedSchema": schema})
    except MCPError as exc:
        return {"content": [text(f"Elicitation not supported or error: {exc}")]}
    content = json.dumps(answer.get("content") or {})
    return {"content": [text(f"Elicitation completed: action={answer.get('action')}, content={content}")]}


async def _logging(ctx: ServerRequestContext) -> dict[str, Any]:
    for words in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        await ctx.session.send_log_message("info", words, logger="conformance", related_request_id=ctx.request_id)
        await anyio.sleep(0.05)
    return {"content": [text("Tool with logging executed successfully")]}


async def _progress(ctx: ServerRequestContext) -> dict[str, Any]:
    meta: Any = ctx.meta or {}
    token = meta.get("progress_token", meta.get("progressToken")) if isinstance(meta, dict) else None
    for step in (0, 50, 100):
        await ctx.session.report_progress(step, 100, f"Completed step {step} of 100")
        await anyio.sleep(0.05)
    return {"content": [text(str(token))]}


async def _sampling(ctx: ServerRequestContext, args: dict[str, Any]) -> dict[str, Any]:
    message = {"role": "user", "content": text(str(args.get("prompt", "")))}
    try:
        answer = await _ask(ctx, "sampling/createMessage", {"messages": [message], "maxTokens": 100})
    except MCPError as exc:
        return {"content": [text(f"Sampling not supported or error: {exc}")]}
    content = answer.get("content")
    said = content.get("text") if isinstance(content, dict) else None
    return {"content": [text(f"LLM response: {said or 'No response'}")]}


async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> dict[str, Any]:
    name, args = params.name, params.arguments or {}
    if name in {tool["name"] for tool in DIAGNOSTIC_TOOLS} and ERA["name"] == "session":
        return await diagnostic_in_session(ctx, params, lambda method, asked: _ask(ctx, method, asked))
    if name in {tool["name"] for tool in DIAGNOSTIC_TOOLS}:
        return diagnostic_tool(ctx, params).model_dump(mode="json", by_alias=True, exclude_none=True)
    if name.startswith(PREFIX) and ERA["name"] == "session":
        return await asked_in_session(params, lambda again: asking_tool(ctx, again),
                                      lambda method, asked: _ask(ctx, method, asked))
    if name.startswith(PREFIX):
        return asking_tool(ctx, params).model_dump(mode="json", by_alias=True, exclude_none=True)
    simple: dict[str, list[dict[str, Any]]] = {
        "test_simple_text": [text("This is a simple text response for testing.")],
        "test_image_content": [{"type": "image", "data": IMAGE, "mimeType": "image/png"}],
        "test_audio_content": [{"type": "audio", "data": AUDIO, "mimeType": "audio/wav"}],
        "test_embedded_resource": [{"type": "resource", "resource": {
            "uri": "test://embedded-resource", "mimeType": "text/plain",
            "text": "This is an embedded resource content."}}],
        "test_multiple_content_types": [
            text("Multiple content types test:"),
            {"type": "image", "data": IMAGE, "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "test://mixed-content-resource", "mimeType": "application/json",
                                              "text": json.dumps({"test": "data", "value": 123})}}],
    }
    if name in simple:
        return {"content": simple[name]}
    if name == "json_schema_2020_12_tool":
        return {"content": [text(f"JSON Schema 2020-12 tool called with: {json.dumps(args)}")]}
    if name == "test_error_handling":
        return {"content": [text("This tool intentionally returns an error for testing")], "isError": True}
    if name == "test_tool_with_logging":
        return await _logging(ctx)
    if name == "test_tool_with_progress":
        return await _progress(ctx)
    if name == "test_sampling":
        return await _sampling(ctx, args)
    if name == "test_elicitation":
        schema = {"type": "object", "properties": {"response": {"type": "string", "description": "Your answer"}},
                  "required": ["response"]}
        return await _elicit(ctx, str(args.get("message", "")), schema)
    if name == "test_elicitation_sep1034_defaults":
        return await _elicit(ctx, "Please review and update the form fields with defaults", DEFAULTS_FORM)
    if name == "test_elicitation_sep1330_enums":
        return await _elicit(ctx, "Please select options from the enum fields", ENUMS_FORM)
    raise MCPError(code=-32602, message=f"Unknown tool: {name}")


async def list_tools(ctx: ServerRequestContext, params: Any) -> dict[str, Any]:
    return {"tools": TOOLS}


RESOURCES = [
    {"uri": "test://static-text", "name": "static-text", "title": "Static Text Resource",
     "description": "A static text resource", "mimeType": "text/plain"},
    {"uri": "test://static-binary", "name": "static-binary", "title": "Static Binary Resource",
     "description": "A static image", "mimeType": "image/png"},
    {"uri": "test://watched-resource", "name": "watched-resource", "title": "Watched Resource",
     "description": "A resource one may subscribe to", "mimeType": "text/plain"},
]


async def list_resources(ctx: ServerRequestContext, params: Any) -> dict[str, Any]:
    return {"resources": RESOURCES}


async def list_templates(ctx: ServerRequestContext, params: Any) -> dict[str, Any]:
    return {"resourceTemplates": [{"uriTemplate": "test://template/{id}/data", "name": "template",
                                   "title": "Resource Template", "description": "One item by id",
                                   "mimeType": "application/json"}]}


async def read_resource(ctx: ServerRequestContext, params: types.ReadResourceRequestParams) -> dict[str, Any]:
    uri = str(params.uri)
    if uri == "test://static-text":
        return {"contents": [{"uri": uri, "mimeType": "text/plain",
                              "text": "This is the content of the static text resource."}]}
    if uri == "test://static-binary":
        return {"contents": [{"uri": uri, "mimeType": "image/png", "blob": IMAGE}]}
    if uri == "test://watched-resource":
        return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": "Watched resource content"}]}
    if uri.startswith("test://template/") and uri.endswith("/data"):
        ident = uri[len("test://template/"):-len("/data")]
        body = {"id": ident, "templateTest": True, "data": f"Data for ID: {ident}"}
        return {"contents": [{"uri": uri, "mimeType": "application/json", "text": json.dumps(body)}]}
    raise MCPError(code=-32002, message=f"Resource not found: {uri}", data={"uri": uri})


async def subscribe(ctx: ServerRequestContext, params: Any) -> dict[str, Any]:
    return {}


PROMPTS = [
    {"name": "test_simple_prompt", "title": "Simple Test Prompt", "description": "No arguments"},
    {"name": "test_prompt_with_arguments", "title": "Prompt With Arguments", "description": "Two arguments",
     "arguments": [{"name": "arg1", "description": "First", "required": True},
                   {"name": "arg2", "description": "Second", "required": True}]},
    {"name": "test_prompt_with_embedded_resource", "title": "Prompt With Embedded Resource",
     "description": "Embeds a resource",
     "arguments": [{"name": "resourceUri", "description": "URI to embed", "required": True}]},
    {"name": "test_prompt_with_image", "title": "Prompt With Image", "description": "Has an image"},
    *ASKING_PROMPTS,
]


async def list_prompts(ctx: ServerRequestContext, params: Any) -> dict[str, Any]:
    return {"prompts": PROMPTS}


async def get_prompt(ctx: ServerRequestContext, params: types.GetPromptRequestParams) -> dict[str, Any]:
    args = params.arguments or {}
    user = "user"
    if params.name.startswith(PREFIX) and ERA["name"] == "session":
        return await asked_in_session(params, asking_prompt, lambda method, asked: _ask(ctx, method, asked))
    if params.name.startswith(PREFIX):
        return asking_prompt(params).model_dump(mode="json", by_alias=True, exclude_none=True)
    if params.name == "test_simple_prompt":
        return {"messages": [{"role": user, "content": text("This is a simple prompt for testing.")}]}
    if params.name == "test_prompt_with_arguments":
        words = f"Prompt with arguments: arg1='{args.get('arg1')}', arg2='{args.get('arg2')}'"
        return {"messages": [{"role": user, "content": text(words)}]}
    if params.name == "test_prompt_with_embedded_resource":
        resource = {"uri": args.get("resourceUri", ""), "mimeType": "text/plain",
                    "text": "Embedded resource content for testing."}
        return {"messages": [{"role": user, "content": {"type": "resource", "resource": resource}},
                             {"role": user, "content": text("Please process the embedded resource above.")}]}
    if params.name == "test_prompt_with_image":
        return {"messages": [{"role": user, "content": {"type": "image", "data": IMAGE, "mimeType": "image/png"}},
                             {"role": user, "content": text("Please analyze the image above.")}]}
    raise MCPError(code=-32602, message=f"Unknown prompt: {params.name}")


async def complete(ctx: ServerRequestContext, params: Any) -> dict[str, Any]:
    return {"completion": {"values": [], "total": 0, "hasMore": False}}


async def set_level(ctx: ServerRequestContext, params: Any) -> dict[str, Any]:
    return {}


def _stamping(handler: Any) -> Any:
    async def stamp(ctx: ServerRequestContext, params: Any) -> dict[str, Any]:
        return stamped(ctx, await handler(ctx, params))

    return stamp


def build() -> Server:
    server = Server(
        "mcp-conformance-fixture",
        version="1.0.0",
        on_list_tools=_stamping(list_tools),
        on_call_tool=_stamping(call_tool),
        on_list_resources=_stamping(list_resources),
        on_list_resource_templates=_stamping(list_templates),
        on_read_resource=_stamping(read_resource),
        on_subscribe_resource=subscribe,
        on_unsubscribe_resource=subscribe,
        on_list_prompts=_stamping(list_prompts),
        on_get_prompt=_stamping(get_prompt),
        on_completion=_stamping(complete),
        on_set_logging_level=set_level,
    )
    # seals every input-required state and refuses an altered one before a handler runs
    security = RequestStateSecurity.ephemeral()
    server.middleware.append(RequestStateBoundary(security, default_audience="mcp-conformance-fixture"))
    return server


def _security() -> TransportSecuritySettings:
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


def app(transport: str) -> Any:
    server = build()
    if transport == "http" and ERA["name"] != "both":
        return one_era(server.streamable_http_app(transport_security=_security()))
    if transport == "sse":
        from mcp.server.mcpserver import MCPServer

        wrapper = MCPServer("mcp-conformance-fixture")
        wrapper._lowlevel_server = server  # serve the same handlers on the legacy transport
        return wrapper.sse_app(transport_security=_security())
    return server.streamable_http_app(transport_security=_security())


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=["http", "sse"], default="http")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--era", choices=["both", "session", "stateless"], default="both")
    options = parser.parse_args()
    ERA["name"] = options.era
    await serve_on_loopback(app(options.transport), options.port)


if __name__ == "__main__":
    try:
        anyio.run(main)
    except KeyboardInterrupt:
        sys.exit(0)
