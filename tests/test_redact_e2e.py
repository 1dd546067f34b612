"""Generated secrets through the real sidecar and the real server commands.

A stdio upstream (tests/upstreams/fault_server.py) is configured with many generated
secrets in its env (random lengths and characters, credential names and neutral names
with random-looking values); the engine asks it to echo each secret in many shapes
(plain, inside text, JSON-escaped, percent-encoded, base64 at each alignment, a Basic
pair) as a normal result and as an `isError` result, and to dump its environment.
Nothing in any answer decodes back to a secret. Then `servers list`, `servers --json
list` and `servers show` print no secret, an address's `?key=` included."""

from __future__ import annotations

import base64
import json
import os
import random
import string
import sys
import urllib.parse
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.test_redact_forms import hides

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[1]
SECRET_COUNT = 10
_CHARS = string.ascii_letters + string.digits + "+/=-_.~!@#$%^&*()[]{}:;'\",<>?\\| éß€漢"


def _secret(rng: random.Random, spaces: bool = True) -> str:
    """Random length and characters; with a digit and a letter (and, unless `spaces`, no
    space) so it looks random even under a neutral name (redact.answer_secrets)."""
    length = rng.randint(8, 40)
    core = "".join(rng.choice(_CHARS if spaces else _CHARS.replace(" ", "")) for _ in range(length))
    return core[:2] + "7" + core[2:] + "k"


def _shapes(secret: str, rng: random.Random) -> list[str]:
    before = "".join(rng.choice(string.ascii_letters) for _ in range(rng.randint(0, 5)))
    whole = f"{before}{secret} tail"
    raw = whole.encode()
    found = [secret, f"the value is {secret}.", json.dumps({"v": whole}), urllib.parse.quote(whole, safe=""),
             urllib.parse.quote_plus(whole), json.dumps(json.dumps(whole))]
    for align in range(3):
        padded = ("x" * align + whole).encode()
        found += [base64.b64encode(padded).decode(), base64.urlsafe_b64encode(padded).decode().rstrip("=")]
    found.append("Basic " + base64.b64encode(f"{before}u:{secret}".encode()).decode())
    return found + [base64.b64encode(raw).decode()]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    return []


async def test_generated_secrets_never_reach_the_engine(raw_sidecar, write_config, fault_server_entry) -> None:
    rng = random.Random(7)
    secrets = [_secret(rng, spaces=bool(i % 2)) for i in range(SECRET_COUNT)]
    env = {(f"SVC_API_KEY_{i}" if i % 2 else f"SETTING_{i}"): s for i, s in enumerate(secrets)}
    config = write_config({"f": fault_server_entry(env=env)})
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["f__echo", "f__tool_error", "f__env"])
        answers = [await sc.call("f__env", {})]
        assert any(s in answers[0]["result"]["content"][0]["text"] for s in ("[redacted]",))
        for secret in secrets:
            for shape in _shapes(secret, rng):
                answers.append(await sc.call("f__echo", {"nonce": shape}))
                answers.append(await sc.call("f__tool_error", {"message": shape}))
        assert all("result" in a for a in answers)
        assert sum(1 for a in answers if a["result"].get("isError")) == (len(answers) - 1) // 2
        leaks = [(secret, text) for a in answers for text in _strings(a["result"]) for secret in secrets
                 if not hides(text, secret)]
        assert leaks == [], leaks[:3]
        assert sc.stderr.count("[redacted]") >= 0  # the log redactor is checked in test_canaries


async def _omb(*argv: str) -> tuple[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMB_", "OGB_"))}
    with anyio.fail_after(60):
        done = await anyio.run_process([sys.executable, "-m", "sidecar", *argv], check=False, cwd=str(REPO), env=env)
    return done.stdout.decode(), done.stderr.decode()


async def test_server_commands_print_no_secret(tmp_path: Path) -> None:
    rng = random.Random(12)
    key, header, value = (_secret(rng).replace("\\", "") for _ in range(3))
    quoted = urllib.parse.quote(key, safe="")
    servers = {
        "web": {"type": "http", "url": f"https://mcp.example.com/mcp?v=2&key={quoted}",
                "headers": {"X-Api-Key": header}},
        "tool": {"command": "npx", "args": ["-y", "@example/thing"], "env": {"PLAIN": value}},
    }
    path = tmp_path / "sidecar.json"
    path.write_text(json.dumps({"bot": {"id": "b", "engine": "api"}, "mcpServers": servers}))
    printed = []
    for argv in (["servers", "list"], ["servers", "--json", "list"], ["servers", "show", "web"],
                 ["servers", "show", "tool"], ["servers"]):
        out, err = await _omb(*argv, "--config", str(path), "--log-level", "DEBUG")
        printed.append(out + err)
    said = "\n".join(printed)
    assert "mcp.example.com" in said and "web" in said and "tool" in said  # real output, not empty
    assert all(hides(line, s) for line in said.splitlines() for s in (key, header, value))
