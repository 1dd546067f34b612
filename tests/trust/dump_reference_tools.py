"""Write `reference_tools.json`: the tools/list of the npm reference servers (server-everything,
server-filesystem, server-memory) and of the bundled examples, part of the poisoning scan's
benign corpus.

    python tests/trust/dump_reference_tools.py [NODE_MODULES ...]

Each folder is searched for the servers' packages (default: tests/npm/node_modules); the
servers are started with node, asked initialize and tools/list on stdio, and stopped.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SERVERS = {"everything": ("server-everything", "dist/index.js", []),
           "filesystem": ("server-filesystem", "dist/index.js", ["{tmp}"]),
           "memory": ("server-memory", "dist/index.js", [])}


def list_tools(argv: list[str]) -> list[dict]:
    frames = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "dump", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}]
    process = subprocess.Popen(argv, cwd=HERE.parents[1], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    assert process.stdin is not None and process.stdout is not None
    for frame in frames:
        process.stdin.write(json.dumps(frame) + "\n")
    process.stdin.flush()
    try:
        for line in process.stdout:
            message = json.loads(line) if line.startswith("{") else {}
            if message.get("id") == 2:
                return list(message["result"]["tools"])
        raise RuntimeError(f"{argv}: no tools/list answer")
    finally:
        process.kill()
        process.wait()


def main(folders: list[str]) -> None:
    roots = [Path(f) for f in folders] or [HERE.parent / "npm" / "node_modules"]
    dump: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (package, entry, args) in SERVERS.items():
            found = next((r / "@modelcontextprotocol" / package / entry for r in roots
                          if (r / "@modelcontextprotocol" / package / entry).exists()), None)
            if found is not None:
                dump[name] = list_tools(["node", str(found), *[a.format(tmp=tmp) for a in args]])
        for example in ("agents", "notes"):  # the bundled examples
            dump[f"examples-{example}"] = list_tools([sys.executable, "-m", f"sidecar.examples.{example}"])
    (HERE / "reference_tools.json").write_text(json.dumps(dump, indent=1, ensure_ascii=False) + "\n")
    print({name: len(tools) for name, tools in dump.items()})


if __name__ == "__main__":
    main(sys.argv[1:])
