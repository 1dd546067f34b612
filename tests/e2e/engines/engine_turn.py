"""Run one real engine turn through its shim, and report what happened as JSON.

    python engine_turn.py SPEC.json RESULT.json

Meant to run as the first process of its own network and PID namespaces
(`unshare --net --pid --fork --mount-proc`): it brings loopback up, serves the fake model
API (and, when asked, a Streamable HTTP MCP upstream) on 127.0.0.1, prepares the launch
with the shim's Python API, runs the engine with a deadline, and meanwhile samples every
process's argv from /proc. After the engine exits it waits (bounded) for every process of
the turn to end, records the ones that did not as survivors, and kills them. Without
namespaces it still works: it becomes the subreaper of what the turn starts.

The spec (all strings may hold `{base_url}`, `{http_url}`, `{home}` placeholders):
  shim        "claude" | "codex" | "pi"
  dialect     "anthropic" | "responses" | "chat";  script {"steps": [...], "final_text"?}
  settings    the bot's settings (a sidecar config document)
  options     keyword arguments of the shim's Options (besides args and environ)
  args        the engine's own arguments;  env  the engine's base environment
  files       {path: text} written before the launch (models.json, config.toml, ...)
  http_tools  when set, serve an MCP upstream over Streamable HTTP with this many tools
  canaries    secret values that must never appear on any argv
  timeout     seconds the engine may take
"""

from __future__ import annotations

import base64
import ctypes
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path[:0] = [str(HERE), str(REPO)]

from http_upstream import HttpUpstream  # noqa: E402
from model_fakes import FakeModelAPI, Script  # noqa: E402

PR_SET_CHILD_SUBREAPER = 36
SAMPLE_EVERY = 0.01  # seconds between two sweeps of /proc
SETTLE_GRACE = 10.0  # seconds the turn's processes get to end after the engine exits


def _become_subreaper() -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _loopback_up() -> None:
    subprocess.run(["ip", "link", "set", "lo", "up"], capture_output=True, check=False)


def _processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, state) for every process /proc shows."""
    found: dict[int, tuple[int, str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        found[int(entry)] = (int(fields[1]), fields[0])
    return found


def _descendants(root: int) -> list[int]:
    table = _processes()
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    out: list[int] = []
    stack = list(children.get(root, []))
    while stack:
        pid = stack.pop()
        if table[pid][1] != "Z":
            out.append(pid)
        stack.extend(children.get(pid, []))
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return ""


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


class ArgvSampler(threading.Thread):
    """Sweeps /proc/*/cmdline until stopped; remembers every argv seen and any canary hit."""

    def __init__(self, canaries: list[str]) -> None:
        super().__init__(name="argv-sampler", daemon=True)
        forms = {c for c in canaries if c}
        forms |= {base64.b64encode(c.encode()).decode().rstrip("=") for c in canaries if c}
        forms |= {json.dumps(c)[1:-1] for c in canaries if c}
        self.forms = sorted(forms)
        self.stop = threading.Event()
        self.sweeps = 0
        self.argvs: set[str] = set()
        self.hits: list[str] = []

    def run(self) -> None:
        me = os.getpid()
        while not self.stop.is_set():
            for pid in _processes():
                if pid == me:
                    continue
                line = _cmdline(pid)
                if line and line not in self.argvs:
                    self.argvs.add(line)
                    self.hits += [f"{pid}: {line[:300]}" for form in self.forms if form in line]
            self.sweeps += 1
            self.stop.wait(SAMPLE_EVERY)


def _fill(value: Any, marks: dict[str, str]) -> Any:
    if isinstance(value, str):
        for mark, text in marks.items():
            value = value.replace(mark, text)
        return value
    if isinstance(value, list):
        return [_fill(v, marks) for v in value]
    if isinstance(value, dict):
        return {_fill(k, marks): _fill(v, marks) for k, v in value.items()}
    return value


def _prepare(spec: dict[str, Any]) -> Any:
    shim = spec["shim"]
    options = dict(spec.get("options", {}), args=spec.get("args", []), environ=spec.get("env", {}))
    if shim == "claude":
        from shims.claude import ClaudeOptions, prepare_claude

        if "managed_root" in options:
            options["managed_root"] = Path(options["managed_root"])
        return prepare_claude(spec["settings"], ClaudeOptions(**options))
    if shim == "codex":
        from shims.codex import CodexOptions, prepare_codex

        return prepare_codex(spec["settings"], CodexOptions(**options))
    from shims.pi import PiOptions, prepare_pi

    return prepare_pi(spec["settings"], PiOptions(**options))


def _file_modes(launch: Any) -> dict[str, str]:
    paths = [launch.folder, *sorted(launch.folder.iterdir())]
    return {p.name: oct(p.stat().st_mode & 0o777) for p in paths}


def _launch_facts(launch: Any) -> dict[str, Any]:
    facts: dict[str, Any] = {"argv": launch.argv, "notes": list(launch.notes), "files": _file_modes(launch)}
    bridge = launch.extra.get("bridge")
    if bridge is not None:
        facts["bridged"], facts["bridge_reason"] = bridge.bridged, bridge.reason
    if launch.extra.get("mcp_config"):
        facts["mcp_config"] = json.loads(Path(launch.extra["mcp_config"]).read_text())
    if launch.sidecar_config is not None:
        facts["sidecar_config"] = json.loads(launch.sidecar_config.read_text())
    facts["dropped"] = launch.extra.get("dropped", [])
    return facts


def _settle(me: int) -> tuple[float, list[str]]:
    """Wait for the turn's processes to end; (seconds waited, survivors' argv), survivors killed."""
    start = time.monotonic()
    while time.monotonic() - start < SETTLE_GRACE:
        _reap()
        if not _descendants(me):
            return time.monotonic() - start, []
        time.sleep(0.05)
    survivors = _descendants(me)
    described = [f"{pid}: {_cmdline(pid)[:300]}" for pid in survivors]
    for pid in survivors:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 5.0  # a killed process takes a moment to become reapable
    while _descendants(me) and time.monotonic() < deadline:
        _reap()
        time.sleep(0.02)
    _reap()
    return time.monotonic() - start, described


def run_turn(spec: dict[str, Any]) -> dict[str, Any]:
    _loopback_up()
    _become_subreaper()
    me = os.getpid()
    http = HttpUpstream(int(spec["http_tools"])) if spec.get("http_tools") else None
    with FakeModelAPI(spec["dialect"], Script.from_json(spec["script"])) as api:
        if http is not None:
            http.start()
        marks = {"{base_url}": api.base_url, "{http_url}": http.url if http else "", "{home}": spec.get("home", "")}
        spec = _fill(spec, marks)
        for path, text in spec.get("files", {}).items():
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(text)
        sampler = ArgvSampler(spec.get("canaries", []))
        sampler.start()
        started = time.monotonic()
        launch = _prepare(spec)
        prepared = time.monotonic()
        facts = _launch_facts(launch)
        engine = subprocess.Popen(launch.argv, env=launch.env, cwd=launch.cwd, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            stdout, stderr = engine.communicate(timeout=spec.get("timeout", 120))
            code: int | None = engine.returncode
        except subprocess.TimeoutExpired:
            engine.kill()
            stdout, stderr = engine.communicate()
            code = None
        ended = time.monotonic()
        settle_seconds, survivors = _settle(me)
        sampler.stop.set()
        sampler.join()
        launch.cleanup()
        if http is not None:
            http.stop()
        return {
            "exit_code": code, "stdout": stdout, "stderr": stderr[-20000:],
            "prepare_seconds": round(prepared - started, 2), "engine_seconds": round(ended - prepared, 2),
            "settle_seconds": round(settle_seconds, 2), "survivors": survivors,
            "argv_sweeps": sampler.sweeps, "argvs_seen": len(sampler.argvs), "canary_hits": sampler.hits,
            "requests": api.requests, "launch": facts,
            "http_calls": http.calls if http else [],
        }


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text())
    result = run_turn(spec)
    Path(sys.argv[2]).write_text(json.dumps(result, indent=1, default=str))


if __name__ == "__main__":
    main()
