"""A stdio MCP server that lists the tools a JSON file holds (standard library only).

`python listing_server.py TOOLS.json`: answers `initialize`, `ping`, `tools/list` (the
file's array, read at start) and `tools/call` (the arguments back as text, after
`arguments.sleep` seconds when given); notifications are read and ignored. A test changes
one byte of the file between two starts to change what the server lists.
"""

from __future__ import annotations

import json
import sys
import time


def main() -> None:
    with open(sys.argv[1], "rb") as source:
        tools = json.loads(source.read())
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        message = json.loads(line)
        ident, method = message.get("id"), message.get("method")
        if ident is None:
            continue
        params = message.get("params") or {}
        if method == "initialize":
            result: object = {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                              "capabilities": {"tools": {"listChanged": False}},
                              "serverInfo": {"name": "listing-server", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": tools}
        elif method == "tools/call":
            arguments = params.get("arguments") or {}
            time.sleep(float(arguments.get("sleep", 0)))
            result = {"content": [{"type": "text", "text": json.dumps(arguments, sort_keys=True)}], "isError": False}
        elif method == "ping":
            result = {}
        else:
            out.write(json.dumps({"jsonrpc": "2.0", "id": ident,
                                  "error": {"code": -32601, "message": "method not found"}}).encode() + b"\n")
            out.flush()
            continue
        out.write(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
