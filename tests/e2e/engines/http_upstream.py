"""A big MCP upstream over Streamable HTTP on 127.0.0.1 (standard library, JSON answers).

It lists `count` tools in a few areas (`inventory_*`, `billing_*`, `shipping_*`), enough
for the sidecar to treat it as a big server (more than 40 tools) and list it to pi and
codex-chatgpt as its search/describe/call trio. A call answers with JSON naming the tool
and its arguments; every call is recorded (`calls`) so a test can see it arrived.
"""

from __future__ import annotations

import json
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["HttpUpstream", "AREAS"]

AREAS = ("inventory", "billing", "shipping")


def _tool(index: int) -> dict[str, Any]:
    area = AREAS[index % len(AREAS)]
    return {
        "name": f"{area}_op_{index}",
        "description": f"Operation {index} of the {area} area: look up or change {area} records by id.",
        "inputSchema": {
            "type": "object",
            "properties": {"record_id": {"type": "string", "description": f"The {area} record's id."}},
            "required": ["record_id"],
        },
    }


class HttpUpstream:
    def __init__(self, count: int) -> None:
        self.tools = [_tool(i) for i in range(count)]
        self.calls: list[dict[str, Any]] = []
        self.session = secrets.token_hex(16)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="http-upstream", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/mcp"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, method: str, params: dict[str, Any]) -> Any:
        if method == "initialize":
            return {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                    "capabilities": {"tools": {}}, "serverInfo": {"name": "big-http", "version": "1"}}
        if method == "tools/list":
            return {"tools": self.tools}
        if method == "tools/call":
            self.calls.append({"name": params.get("name"), "arguments": params.get("arguments")})
            text = json.dumps({"ran": params.get("name"), "arguments": params.get("arguments")})
            return {"content": [{"type": "text", "text": text}]}
        if method == "ping":
            return {}
        raise LookupError(method)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, body: Any = None) -> None:
                data = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Mcp-Session-Id", upstream.session)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._send(405)

            def do_DELETE(self) -> None:
                self._send(200)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                message = json.loads(raw or b"{}")
                if "id" not in message:
                    self._send(202)
                    return
                try:
                    result = upstream.answer(str(message.get("method")), message.get("params") or {})
                    self._send(200, {"jsonrpc": "2.0", "id": message["id"], "result": result})
                except LookupError:
                    error = {"code": -32601, "message": f"method not found: {message.get('method')}"}
                    self._send(200, {"jsonrpc": "2.0", "id": message["id"], "error": error})

        return Handler
