"""An MCP upstream on stdio whose answers are whatever bytes the test hands it (stdlib only).

    python tests/upstreams/hostile_server.py [lists=DIR] [exit-if=FILE]

It answers `initialize` correctly (tools, prompts and resources, with `listChanged`) and:

* `tools/list`, `prompts/list`, `resources/list`: the raw bytes of `DIR/tools.json`,
  `DIR/prompts.json`, `DIR/resources.json` (each the whole `result` object, read again on
  every request, so a test can put lone surrogates or 5 MB descriptions in it); without a
  file, a small correct listing of its own tools.
* tool `say {lines}`: writes each string of `lines` as one raw line on stdout, with `{id}`
  replaced by the call's JSON id, and nothing else. A test that wants an answer writes one;
  a test that wants the call answered only by the sidecar writes none.
* tool `relist {}`: sends the three `list_changed` notifications, then answers "relisted".
* tool `echo {nonce}`: answers the nonce.
* tool `exit {}`: exits at once (code 3) without answering.
* `resources/read` of `big://N`: a text of N characters (any other URI: an empty text).

With `exit-if=FILE`, it exits at start (code 3) while FILE exists: an upstream that
cannot come back.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

OWN_TOOLS = [
    {"name": "say", "description": "Writes raw lines", "inputSchema": {"type": "object"}},
    {"name": "relist", "description": "Announces changed lists", "inputSchema": {"type": "object"}},
    {"name": "echo", "description": "Answers the nonce", "inputSchema": {"type": "object"}},
    {"name": "exit", "description": "Exits without answering", "inputSchema": {"type": "object"}},
]
DEFAULTS = {"tools": {"tools": OWN_TOOLS}, "prompts": {"prompts": []}, "resources": {"resources": []}}


def write(data: bytes) -> None:
    sys.stdout.buffer.write(data + b"\n")
    sys.stdout.buffer.flush()


def answer(ident: Any, result: Any) -> None:
    write(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}).encode())


def listing(folder: Path | None, kind: str) -> bytes:
    path = folder / f"{kind}.json" if folder else None
    if path is not None and path.exists():
        return path.read_bytes()
    return json.dumps(DEFAULTS[kind]).encode()


def call(ident: Any, params: dict[str, Any]) -> None:
    name, arguments = params.get("name"), params.get("arguments") or {}
    if name == "say":
        for line in arguments.get("lines", []):
            write(line.replace("{id}", json.dumps(ident)).encode("utf-8", "surrogatepass"))
    elif name == "relist":
        for kind in ("tools", "prompts", "resources"):
            write(json.dumps({"jsonrpc": "2.0", "method": f"notifications/{kind}/list_changed"}).encode())
        answer(ident, {"content": [{"type": "text", "text": "relisted"}]})
    elif name == "exit":
        sys.exit(3)
    else:
        answer(ident, {"content": [{"type": "text", "text": str(arguments.get("nonce", ""))}]})


def handle(message: dict[str, Any], folder: Path | None) -> None:
    method, ident = message.get("method"), message.get("id")
    if ident is None or method is None:
        return
    if method == "initialize":
        answer(ident, {"protocolVersion": message["params"]["protocolVersion"], "serverInfo": {"name": "hostile"},
                       "capabilities": {k: {"listChanged": True} for k in ("tools", "prompts", "resources")}})
    elif method in ("tools/list", "prompts/list", "resources/list"):
        body = listing(folder, method.split("/")[0])
        write(b'{"jsonrpc":"2.0","id":%s,"result":%s}' % (json.dumps(ident).encode(), body))
    elif method == "tools/call":
        call(ident, message.get("params") or {})
    elif method == "resources/templates/list":
        answer(ident, {"resourceTemplates": []})
    elif method == "resources/read":
        uri = str((message.get("params") or {}).get("uri", ""))
        size = int(uri[len("big://"):]) if uri.startswith("big://") and uri[len("big://"):].isdigit() else 0
        answer(ident, {"contents": [{"uri": uri, "mimeType": "text/plain", "text": "r" * size}]})
    else:
        write(json.dumps({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "no"}}).encode())


def main(argv: list[str]) -> None:
    options = dict(arg.split("=", 1) for arg in argv if "=" in arg)
    folder = Path(options["lists"]) if "lists" in options else None
    if "exit-if" in options and Path(options["exit-if"]).exists():
        sys.exit(3)
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict):
            handle(message, folder)


if __name__ == "__main__":
    main(sys.argv[1:])
