"""A tiny MCP server loop on the standard library, for the bundled example servers.

The example servers ship with the project and run under any Python 3.11, so they use
only `json` and `sys`: one request per line in, one answer per line out.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["MiniServer", "text"]

ToolFn = Callable[[dict[str, Any]], Any]


def text(value: str, is_error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": is_error}


class MiniServer:
    def __init__(self, name: str) -> None:
        self.name = name
        self.tools: list[dict[str, Any]] = []
        self.functions: dict[str, ToolFn] = {}
        self.resources: dict[str, tuple[dict[str, Any], Callable[[], str]]] = {}
        self.prompts: dict[str, tuple[dict[str, Any], Callable[[dict[str, Any]], str]]] = {}

    def tool(self, name: str, description: str, properties: dict[str, Any], required: list[str] | None = None, **extra: Any) -> Callable[[ToolFn], ToolFn]:
        def register(fn: ToolFn) -> ToolFn:
            schema = {"type": "object", "properties": properties, "required": required or []}
            self.tools.append({"name": name, "description": description, "inputSchema": schema, **extra})
            self.functions[name] = fn
            return fn
        return register

    def resource(self, uri: str, name: str, read: Callable[[], str]) -> None:
        self.resources[uri] = ({"uri": uri, "name": name, "mimeType": "text/plain"}, read)

    def prompt(self, name: str, description: str, render: Callable[[dict[str, Any]], str], arguments: list[dict[str, Any]]) -> None:
        self.prompts[name] = ({"name": name, "description": description, "arguments": arguments}, render)

    def handle(self, method: str, params: dict[str, Any]) -> Any:
        if method == "initialize":
            return {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
                "serverInfo": {"name": self.name, "version": "1.0"},
            }
        if method == "ping":
            return {}
        if method == "tools/list":
            return {"tools": self.tools}
        if method == "tools/call":
            fn = self.functions.get(params.get("name", ""))
            if fn is None:
                raise LookupError(f"no tool named {params.get('name')!r}")
            result = fn(params.get("arguments") or {})
            return result if isinstance(result, dict) and "content" in result else text(json.dumps(result))
        if method == "resources/list":
            return {"resources": [spec for spec, _ in self.resources.values()]}
        if method == "resources/read":
            spec, read = self.resources[params["uri"]]
            return {"contents": [{"uri": spec["uri"], "mimeType": "text/plain", "text": read()}]}
        if method == "prompts/list":
            return {"prompts": [spec for spec, _ in self.prompts.values()]}
        if method == "prompts/get":
            _, render = self.prompts[params["name"]]
            message = render(params.get("arguments") or {})
            return {"messages": [{"role": "user", "content": {"type": "text", "text": message}}]}
        raise NotImplementedError(method)

    def serve(self) -> None:
        for line in sys.stdin:
            if not line.strip():
                continue
            message = json.loads(line)
            if "id" not in message or "method" not in message:
                continue
            try:
                answer = {"result": self.handle(message["method"], message.get("params") or {})}
            except NotImplementedError:
                answer = {"error": {"code": -32601, "message": f"method not found: {message['method']}"}}
            except (LookupError, ValueError, TypeError) as exc:
                answer = {"error": {"code": -32602, "message": str(exc)}}
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], **answer}) + "\n")
            sys.stdout.flush()
