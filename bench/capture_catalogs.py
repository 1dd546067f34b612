"""Capture the `tools/list` of published MCP servers: the real catalogs of the project's
own retrieval development set (`tests/retrieval/catalogs/`).

Owns the list of servers (npm and PyPI packages, how each is started, the dummy settings
it needs to start) and the capture: each server is started over stdio in a scratch folder
outside the repository, initialised, asked for every page of `tools/list`, and stopped.
A server that does not list its tools without real credentials is skipped and named.
No value of any setting is a real credential: each is a placeholder.

    python -m bench.capture_catalogs --scratch /tmp/mcpcat --install   # once
    python -m bench.capture_catalogs --scratch /tmp/mcpcat             # re-capture

`--install` runs `npm install` and `pip install --target` in the scratch folder; without
it the packages must already be there. The suite never runs this: it reads the JSON.
The versions captured are written beside the tools, so a re-capture shows what moved.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

from bench.candidates import BENCH_DIR

OUT = BENCH_DIR.parent / "tests" / "retrieval" / "catalogs"
PLACEHOLDER = "placeholder-not-a-credential"


class Server(NamedTuple):
    alias: str  # the name the merged catalog prefixes its tools with
    registry: str  # npm | pypi
    package: str
    command: tuple[str, ...]  # relative to the scratch folder's bin for its registry
    settings: tuple[str, ...] = ()  # environment names given the placeholder


SERVERS = (
    Server("github", "npm", "@modelcontextprotocol/server-github", ("mcp-server-github",),
           ("GITHUB_PERSONAL_ACCESS_TOKEN",)),
    Server("gitlab", "npm", "@modelcontextprotocol/server-gitlab", ("mcp-server-gitlab",),
           ("GITLAB_PERSONAL_ACCESS_TOKEN",)),
    Server("slack", "npm", "@modelcontextprotocol/server-slack", ("mcp-server-slack",),
           ("SLACK_BOT_TOKEN", "SLACK_TEAM_ID")),
    Server("notion", "npm", "@notionhq/notion-mcp-server", ("notion-mcp-server",), ("NOTION_TOKEN",)),
    Server("playwright", "npm", "@playwright/mcp", ("playwright-mcp", "--headless")),
    Server("firecrawl", "npm", "firecrawl-mcp", ("firecrawl-mcp",), ("FIRECRAWL_API_KEY",)),
    Server("tavily", "npm", "tavily-mcp", ("tavily-mcp",), ("TAVILY_API_KEY",)),
    Server("maps", "npm", "@modelcontextprotocol/server-google-maps", ("mcp-server-google-maps",),
           ("GOOGLE_MAPS_API_KEY",)),
    Server("kubernetes", "npm", "mcp-server-kubernetes", ("mcp-server-kubernetes",)),
    Server("circleci", "npm", "@circleci/mcp-server-circleci", ("mcp-server-circleci",), ("CIRCLECI_TOKEN",)),
    Server("redis", "npm", "@modelcontextprotocol/server-redis", ("mcp-server-redis", "redis://127.0.0.1:1")),
    Server("mongodb", "npm", "mongodb-mcp-server", ("mongodb-mcp-server",)),
    Server("git", "pypi", "mcp-server-git", ("mcp-server-git",)),
    Server("fetch", "pypi", "mcp-server-fetch", ("mcp-server-fetch",)),
    Server("time", "pypi", "mcp-server-time", ("mcp-server-time", "--local-timezone", "UTC")),
)


def install(scratch: Path) -> None:
    """The packages into the scratch folder (npm without install scripts: no browser download)."""
    npm = scratch / "npm"
    npm.mkdir(parents=True, exist_ok=True)
    if not (npm / "package.json").exists():
        subprocess.run(["npm", "init", "-y"], cwd=npm, check=True, capture_output=True)
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts",
                    *[s.package for s in SERVERS if s.registry == "npm"]], cwd=npm, check=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "--target", str(scratch / "py" / "site"),
                    *[s.package for s in SERVERS if s.registry == "pypi"]], check=True)


def _launch(server: Server, scratch: Path) -> subprocess.Popen[bytes]:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(scratch / "home"), "NO_COLOR": "1"}
    env.update(dict.fromkeys(server.settings, PLACEHOLDER))
    if server.registry == "npm":
        program = [str(scratch / "npm" / "node_modules" / ".bin" / server.command[0])]
    else:
        site = scratch / "py" / "site"
        env["PYTHONPATH"] = str(site)
        program = [sys.executable, str(site / "bin" / server.command[0])]
    (scratch / "home").mkdir(exist_ok=True)
    return subprocess.Popen([*program, *server.command[1:]], cwd=scratch, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def _answer(process: subprocess.Popen[bytes], wanted: int, deadline: float) -> dict[str, Any]:
    """The response to request `wanted` (lines that are not JSON, or other messages, skipped)."""
    assert process.stdout is not None
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        line = process.stdout.readline()
        if not line:
            raise RuntimeError("the server closed its output")
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and message.get("id") == wanted:
            if "error" in message:
                raise RuntimeError(f"error: {message['error']}")
            result: dict[str, Any] = message.get("result") or {}
            return result
    raise RuntimeError("no answer in time")


def _send(process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()


def capture(server: Server, scratch: Path, seconds: float = 60.0) -> dict[str, Any]:
    """One server's tools and the version it reports."""
    process = _launch(server, scratch)
    deadline = time.monotonic() + seconds
    try:
        _send(process, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "capture", "version": "1"}}})
        hello = _answer(process, 1, deadline)
        _send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        for page in range(2, 50):
            params = {"cursor": cursor} if cursor else {}
            _send(process, {"jsonrpc": "2.0", "id": page, "method": "tools/list", "params": params})
            listed = _answer(process, page, deadline)
            tools += listed.get("tools") or []
            cursor = listed.get("nextCursor")
            if not cursor:
                break
    finally:
        process.kill()
        process.wait(10)
    info = hello.get("serverInfo") or {}
    return {"server": server.alias, "package": f"{server.registry}:{server.package}",
            "version": str(info.get("version", "")), "tools": tools}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.capture_catalogs", description=__doc__.splitlines()[0])
    parser.add_argument("--scratch", type=Path, required=True, help="a folder outside the repository")
    parser.add_argument("--install", action="store_true", help="install the packages there first")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--only", nargs="*", help="aliases to capture (default: all)")
    args = parser.parse_args(argv)
    scratch = args.scratch.resolve()
    if scratch.is_relative_to(BENCH_DIR.parent.resolve()):
        raise SystemExit("the scratch folder must be outside the repository")
    if args.install:
        install(scratch)
    args.out.mkdir(parents=True, exist_ok=True)
    for server in SERVERS:
        if args.only and server.alias not in args.only:
            continue
        try:
            captured = capture(server, scratch)
        except (OSError, RuntimeError) as error:
            print(f"{server.alias}: skipped ({error})", file=sys.stderr)
            continue
        if not captured["tools"]:
            print(f"{server.alias}: skipped (no tools listed)", file=sys.stderr)
            continue
        path = args.out / f"{server.alias}.json"
        path.write_text(json.dumps(captured, indent=1, ensure_ascii=False) + "\n")
        print(f"{server.alias}: {len(captured['tools'])} tools ({captured['package']} {captured['version']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
