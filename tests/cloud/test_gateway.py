"""One gateway, many bots: a bot's own servers mount only on its face; boxed mode refuses
a command that reaches another bot's folder; per-bot env values reach only that bot's
children; no face sees another's values in answers, errors, logs or metric labels."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.cloud.cloud_support import FAULT_SERVER, Client, fault_entry, headers, write_config
from tests.http.http_support import TOKEN, open_http_sidecar

pytestmark = pytest.mark.timeout(120)

IRIS, KAI = "token-of-iris-0123456789abcdef", "token-of-kai-0123456789abcdef"
CANARY_IRIS, CANARY_KAI = "canary-iris-5e1f0c2a9b", "canary-kai-7d3b8e4f6a"
TOOL = "import os, sys\nos.execv(sys.executable, [sys.executable, {server!r}, *sys.argv[1:]])\n"


def forms(secret: str) -> list[str]:
    return [secret, base64.b64encode(secret.encode()).decode(), json.dumps(secret)[1:-1]]


def gateway_config(tmp_path: Path) -> Path:
    root = tmp_path / "workspaces"
    for bot in ("iris", "kai"):
        (root / bot).mkdir(parents=True)
    tool = root / "iris" / "tool.py"
    tool.write_text(TOOL.format(server=str(FAULT_SERVER)))
    servers = {
        "notes": fault_entry(perBot={"iris": {"env": {"SECRET": CANARY_IRIS}}, "kai": {"env": {"SECRET": CANARY_KAI}}}),
        "blender": {"command": sys.executable, "args": [str(tool)], "bot": "iris"},
        "sneaky": {"command": sys.executable, "args": [str(tool), "name=sneaky"]},
        "borrowed": {"command": sys.executable, "args": [str(FAULT_SERVER)], "cwd": str(root / "iris"), "bot": "kai"},
    }
    gateway = {"boxRoot": str(root), "bots": [{"id": "iris", "tokenEnv": "OMB_TOKEN_IRIS", "engine": "claude"},
                                               {"id": "kai", "tokenEnv": "OMB_TOKEN_KAI", "engine": "claude"}]}
    return write_config(tmp_path, servers, gateway=gateway, metrics={"enabled": True})


async def test_each_bot_sees_only_its_own(tmp_path: Path) -> None:
    config = gateway_config(tmp_path)
    env = {"OMB_TOKEN_IRIS": IRIS, "OMB_TOKEN_KAI": KAI}
    seen: dict[str, list[str]] = {"iris": [], "kai": []}
    async with open_http_sidecar(config, tmp_path, env=env) as sc, aiohttp.ClientSession() as http:
        iris = Client(f"{sc.base}/bots/iris", IRIS, http)
        kai = Client(f"{sc.base}/bots/kai", KAI, http)
        async with http.post(iris.url, json={}, headers=headers(KAI)) as response:
            assert response.status == 401  # kai's bearer does not open iris's face
        async with http.post(iris.url, json={}, headers=headers(TOKEN)) as response:
            assert response.status == 401  # nor does the operator's
        async with http.post(f"{sc.base}/bots/nobody/mcp", json={}, headers=headers(IRIS)) as response:
            assert response.status == 404 and "no such face" in await response.text()
        for client in (iris, kai):
            await client.initialize()
        iris_tools, kai_tools = await iris.tools(), await kai.tools()
        assert {"notes__env", "blender__echo", "sneaky__echo"} <= set(iris_tools)
        assert "notes__env" in kai_tools
        assert not [t for t in kai_tools if t.startswith(("blender__", "sneaky__", "borrowed__"))]

        answers: dict[str, Any] = {}
        for name, client in (("iris", iris), ("kai", kai)):
            answer = answers[name] = await client.call("notes__env", {})
            seen[name].append(json.dumps(answer))
            for other in ("blender__echo", "sneaky__echo", "borrowed__echo"):
                seen[name].append(json.dumps(await client.call(other, {"nonce": "x"})))
        delivered = {name: json.loads(answers[name]["result"]["content"][0]["text"])["SECRET"] for name in answers}
        # each bot's child got that bot's value (shown, or masked once answers are redacted)
        assert delivered["iris"] in (CANARY_IRIS, "[redacted]") and delivered["kai"] in (CANARY_KAI, "[redacted]")
        assert "error" in json.loads(seen["kai"][1])  # iris's own server is unknown to kai

        async with http.get(f"{sc.base}/metrics", headers=headers(TOKEN)) as response:
            assert response.status == 200
            metrics = await response.text()
        async with http.get(f"{sc.base}/metrics", headers=headers(IRIS)) as response:
            assert response.status == 401  # a bot does not read the gateway's figures

    for secret in forms(CANARY_KAI):
        assert all(secret not in text for text in seen["iris"])
    for secret in forms(CANARY_IRIS):
        assert all(secret not in text for text in seen["kai"])
    for secret in (*forms(CANARY_IRIS), *forms(CANARY_KAI), IRIS, KAI):
        assert secret not in sc.stderr and secret not in metrics
    assert 'face="iris"' in metrics and 'face="kai"' in metrics
    assert "another bot's folder" in sc.stderr  # kai's refusals are said, with the reason


async def test_header_values_are_given_per_bot(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "http"))
    from fake_upstream import FakeUpstream, serve_fake

    iris_key, kai_key = "Bearer docs-key-of-iris-8c1d", "Bearer docs-key-of-kai-2f7e"
    async with serve_fake(FakeUpstream()) as fake:
        servers = {"docs": {"type": "http", "url": fake.url,
                            "perBot": {"iris": {"headers": {"Authorization": iris_key}},
                                       "kai": {"headers": {"Authorization": kai_key}}}}}
        gateway = {"bots": [{"id": "iris", "tokenEnv": "OMB_TOKEN_IRIS"}, {"id": "kai", "tokenEnv": "OMB_TOKEN_KAI"}]}
        config = write_config(tmp_path, servers, gateway=gateway)
        env = {"OMB_TOKEN_IRIS": IRIS, "OMB_TOKEN_KAI": KAI}
        async with open_http_sidecar(config, tmp_path, env=env) as sc, aiohttp.ClientSession() as http:
            answers = {}
            for name, token in (("iris", IRIS), ("kai", KAI)):
                client = Client(f"{sc.base}/bots/{name}", token, http)
                await client.initialize()
                answers[name] = json.dumps(await client.call("docs__whoami", {}))
        sent = {r.headers.get("Authorization") for r in fake.requests
                if isinstance(r.body, dict) and r.body.get("method") == "tools/call"}
    assert sent == {iris_key, kai_key}  # each bot's call carried its own value, and only those two
    assert "docs-key-of-kai" not in answers["iris"]
    assert "docs-key-of-iris" not in answers["kai"]
    assert "docs-key-of" not in sc.stderr
