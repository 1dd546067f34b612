"""An upstream whose tools change between lists: standard library only, JSON lines on stdio.

`python shifty_server.py TOOLS.json`: lists the tools in TOOLS.json (a JSON array of tool
definitions) plus `reload_tools`; calling `reload_tools` reads the file again and sends
`notifications/tools/list_changed`. Every other call answers "ran NAME with ARGS".
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

RELOAD = {"name": "reload_tools", "description": "Read the tool file again.",
          "inputSchema": {"type": "object", "properties": {}}}


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    path = Path(sys.argv[1])
    tools = json.loads(path.read_text())
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        method, ident = message.get("method"), message.get("id")
        if ident is None:
            continue
        if method == "initialize":
            result = {"protocolVersion": message["params"].get("protocolVersion", "2025-06-18"),
                      "capabilities": {"tools": {"listChanged": True}}, "serverInfo": {"name": "shifty", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [*tools, RELOAD]}
        elif method == "tools/call":
            name = message["params"]["name"]
            if name == "reload_tools":
                tools = json.loads(path.read_text())
                send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            arguments = json.dumps(message["params"].get("arguments", {}), sort_keys=True)
            result = {"content": [{"type": "text", "text": f"ran {name} with {arguments}"}]}
        elif method == "ping":
            result = {}
        else:
            send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": f"no {method}"}})
            continue
        send({"jsonrpc": "2.0", "id": ident, "result": result})


if __name__ == "__main__":
    main()
