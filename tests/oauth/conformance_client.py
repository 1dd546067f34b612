"""The client command the official conformance suite runs for its auth scenarios:
`python tests/oauth/conformance_client.py <server-url>`.

It drives the sidecar the way a person and an engine would: writes a config naming the
scenario's server (with the scenario's app, when MCP_CONFORMANCE_CONTEXT gives one), runs
`omb-sidecar signin` with --no-browser, plays the browser (opens the printed
authorization address and follows its redirects back to the sidecar's loopback return
address), then starts the sidecar on stdio and lists and calls the server's tools. A
call refused for lack of scope is followed by one new sign-in and one retry, as the
sidecar's words ask a person to do.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import aiohttp

REPO = Path(__file__).resolve().parents[2]
ALIAS = "target"


def config_for(url: str, folder: Path) -> Path:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    oauth: dict[str, Any] = {}
    if context.get("client_id"):
        oauth["clientId"] = context["client_id"]
    if context.get("client_secret"):
        oauth["clientSecret"] = context["client_secret"]
    if context.get("private_key_pem"):
        key = folder / "client-key.pem"
        key.write_text(context["private_key_pem"])
        oauth["privateKeyFile"] = str(key)
    if "client-credentials" in os.environ.get("MCP_CONFORMANCE_SCENARIO", ""):
        oauth["grant"] = "client_credentials"
    # a deployment's published Client ID Metadata Document (used where a server accepts one)
    oauth["clientMetadataUrl"] = context.get("client_metadata_url") or "https://conformance-test.local/client-metadata.json"
    entry: dict[str, Any] = {"type": "http", "url": url}
    if oauth:
        entry["oauth"] = oauth
    path = folder / "config.json"
    path.write_text(json.dumps({"face": {"name": "conformance", "layout": "full", "listWaitSeconds": 20},
                                "mcpServers": {ALIAS: entry}}))
    return path


async def browse(url: str) -> None:
    """Follow the authorization address through its redirects (the sidecar's callback last)."""
    async with aiohttp.ClientSession() as browser, browser.get(url, allow_redirects=True, max_redirects=10) as page:
        await page.read()


async def sign_in(config: Path) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "sidecar", "signin", ALIAS, "--config", str(config), "--no-browser",
        stdout=asyncio.subprocess.PIPE, cwd=str(REPO))
    assert process.stdout is not None
    browsing: list[asyncio.Task[None]] = []
    said = []
    async for raw in process.stdout:
        line = raw.decode(errors="replace").rstrip("\n")
        said.append(line)
        print(f"signin: {line}", file=sys.stderr)
        if line.startswith("http"):
            browsing.append(asyncio.create_task(browse(line)))
    for task in browsing:
        try:
            await task
        except aiohttp.ClientError as exc:
            print(f"browser: {exc}", file=sys.stderr)
    return await process.wait(), "\n".join(said)


class Engine:
    """A minimal engine on the sidecar's stdio."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.next_id = 0

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.next_id += 1
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                                             "params": params}).encode() + b"\n")
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), 30)
            if not line:
                raise RuntimeError("the sidecar closed its stdout")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                return dict(message)

    def notify(self, method: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")


async def use_tools(config: Path) -> str:
    """List the tools and call the first; returns the call's error words, or ''."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "sidecar", "--config", str(config), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, cwd=str(REPO))
    engine = Engine(process)
    try:
        await engine.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                            "clientInfo": {"name": "conformance-engine", "version": "0"}})
        engine.notify("notifications/initialized")
        tools = (await engine.request("tools/list", {})).get("result", {}).get("tools", [])
        print(f"tools: {[t['name'] for t in tools]}", file=sys.stderr)
        theirs = [t["name"] for t in tools if t["name"].startswith(f"{ALIAS}__")]
        if not theirs:
            return "the server's tools are not listed"
        answer = await engine.request("tools/call", {"name": theirs[0], "arguments": {}})
        print(f"call: {json.dumps(answer)[:300]}", file=sys.stderr)
        error = answer.get("error", {}).get("message", "")
        if not error and answer.get("result", {}).get("isError"):
            error = json.dumps(answer["result"].get("content"))
        return str(error)
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 3)
        except asyncio.TimeoutError:
            process.kill()


async def main(url: str) -> int:
    with tempfile.TemporaryDirectory() as folder:
        config = config_for(url, Path(folder))
        code, said = await sign_in(config)
        if "Not signed in" in said:
            return 1
        again = "a person must" in said  # signed in, but the server wants a sign-in again (wider, elsewhere)
        error = "" if again else await use_tools(config)
        if again or "omb-sidecar signin" in error:  # as the words ask a person to do
            await sign_in(config)
            error = await use_tools(config)
        return 1 if error else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[-1])))
