"""`omb-sidecar demo`: the sidecar on the bundled example config, driven by a scripted
engine session that prints what an engine sees and a few calls going through.

The bundled config names its servers as `python3 <script>.py`; the demo runs them with
this interpreter and from this folder, so it works from any checkout or install.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["run_demo", "demo_config"]

HERE = Path(__file__).resolve().parent


def demo_config() -> dict[str, Any]:
    """The bundled config with its example servers resolved to runnable paths."""
    config: dict[str, Any] = json.loads((HERE / "demo.json").read_text())
    for entry in config["mcpServers"].values():
        if entry.get("command") == "python3":
            entry["command"] = sys.executable
            entry["args"] = [str(HERE / a) if a.endswith(".py") else a for a in entry["args"]]
    return config


class ScriptedEngine:
    """Speaks JSON lines to a sidecar process the way an engine would."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.next_id = 0
        self.notifications: list[str] = []

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        frame = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps(frame).encode() + b"\n")
        self.process.stdin.flush()
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("the sidecar stopped")
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == self.next_id:
                return message
            if "method" in message:
                self.notifications.append(message["method"])


def _show(title: str, body: Any) -> None:
    print(f"\n== {title}")
    print(body if isinstance(body, str) else json.dumps(body, indent=2)[:1500])


def _tool_text(answer: dict[str, Any]) -> str:
    result = answer.get("result") or {}
    return " ".join(c.get("text", "") for c in result.get("content", [])) or json.dumps(answer)


def _start(path: Path, environ: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "sidecar", "--config", str(path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=environ)


def _stop(process: subprocess.Popen[bytes]) -> None:
    assert process.stdin
    process.stdin.close()
    process.wait(timeout=10)


def run_demo() -> int:
    """Run the demo; a reader that stops early (`| head`) ends it quietly, children stopped."""
    try:
        return _run_both()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's last flush must not fail again
        return 0


def _run_both() -> int:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "demo-config.json"
        path.write_text(json.dumps(demo_config()))
        started = time.perf_counter()
        process = _start(path)
        try:
            status = _session(ScriptedEngine(process), started)
        finally:
            _stop(process)
        bridged = _start(path, {**os.environ, "OMB_AGENTS_TOOL_BRIDGE": "1"})
        try:
            _bridged_session(ScriptedEngine(bridged))
        finally:
            _stop(bridged)
        return status


def _bridged_session(engine: ScriptedEngine) -> None:
    """The same servers with the built-in catalog bridged: fewer tools listed, all reachable."""
    engine.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "demo-engine", "version": "1"}})
    tools = engine.request("tools/list")["result"]["tools"]
    _show("with OMB_AGENTS_TOOL_BRIDGE=1, the engine sees", "  " + ", ".join(t["name"] for t in tools))
    found = engine.request("tools/call", {"name": "find_tool", "arguments": {"query": "read room messages"}})
    _show("tools/call find_tool {\"query\": \"read room messages\"}", f"  -> {_tool_text(found)[:300]}")
    used = engine.request("tools/call", {"name": "use_tool", "arguments": {"name": "agents__read_room",
                                                                          "arguments": {"limit": 3}}})
    _show("tools/call use_tool agents__read_room", f"  -> {_tool_text(used)}")


def _session(engine: ScriptedEngine, started: float) -> int:
    init = engine.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                         "clientInfo": {"name": "demo-engine", "version": "1"}})
    _show(f"initialize answered in {1000 * (time.perf_counter() - started):.0f} ms", init["result"])
    tools: list[dict[str, Any]] = []
    deadline = time.monotonic() + 10
    while not _both_listed(tools) and time.monotonic() < deadline:
        tools = engine.request("tools/list")["result"]["tools"]
        time.sleep(0.05) if not _both_listed(tools) else None
    _show("tools the engine sees", "\n".join(f"  {t['name']}: {t.get('description', '')}" for t in tools))
    for name, arguments in (("notes__search_notes", {"query": "milk"}),
                            ("agents__post_to_room", {"text": "hello from the demo"}),
                            ("agents__list_bots", {}),
                            ("notes__no_such_tool", {})):
        answer = engine.request("tools/call", {"name": name, "arguments": arguments})
        shown = answer["error"]["message"] if "error" in answer else _tool_text(answer)
        _show(f"tools/call {name} {json.dumps(arguments)}", f"  -> {shown}")
    big = engine.request("tools/call", {"name": "notes__export_notes", "arguments": {}})
    view = json.loads(_tool_text(big))
    _show("tools/call notes__export_notes (a large JSON result, shaped by the gate)",
          f"  -> {view['note']}\n     shape: {json.dumps(view['shape'])}\n     first of "
          f"{view['records']['total']}: {json.dumps(view['records']['first'][:2])} ...")
    query = "[?topic=='travel' && words > `330`].title"
    answer = engine.request("tools/call", {"name": "query_result", "arguments": {"handle": view["handle"], "query": query}})
    _show(f"tools/call query_result {query}", f"  -> {_tool_text(answer)}")
    queried = "error" not in answer and not (answer.get("result") or {}).get("isError")
    read = engine.request("resources/read", {"uri": "notes://welcome"})
    _show("resources/read notes://welcome", f"  -> {read['result']['contents'][0]['text']}")
    prompt = engine.request("prompts/get", {"name": "agents__greet", "arguments": {"bot": "otto"}})
    _show("prompts/get agents__greet", f"  -> {prompt['result']['messages'][0]['content']['text']}")
    _show("notifications seen", ", ".join(sorted(set(engine.notifications))) or "none")
    return 0 if _both_listed(tools) and queried else 1


def _both_listed(tools: list[dict[str, Any]]) -> bool:
    """Both example servers' tools are listed (the first tools/list waits for them briefly)."""
    return all(any(t["name"].startswith(prefix) for t in tools) for prefix in ("agents__", "notes__"))
