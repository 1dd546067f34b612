"""Confirmation the gate owns, with real clients that support elicitation: the mcp SDK
client on stdio, on HTTP sessions (2025-11-25) and on the stateless 2026-07-28 revision
(input-required rounds with a sealed `requestState`); allow, deny, timeout, and states
that are altered, foreign, expired, replayed or made for other arguments."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import mcp_types as types
import pytest

from tests.http.http_support import open_http_sidecar

pytestmark = pytest.mark.e2e

MODERN = "2026-07-28"
CANARY = "canary-secret-3e9a7c"


def config_for(write_config, fault_server_entry, tmp_path: Path, **policy: Any) -> tuple[Path, Path]:
    audit = tmp_path / "audit.jsonl"
    entry = {**fault_server_entry(), "consequential": ["echo"], "pinning": "off"}
    config = write_config({"f": entry}, policy={"requireConfirmation": True, "confirmSeconds": 5, **policy},
                          audit={"file": str(audit)})
    return config, audit


def decisions(audit: Path) -> list[tuple[str, str]]:
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    return [(d["stage"], d["action"]) for r in records if r.get("tool") == "f__echo" for d in r["decisions"]]


def text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


class Person:
    """An elicitation callback that answers as told and remembers what it was shown."""

    def __init__(self, decision: str | None, action: str = "accept", stall: bool = False) -> None:
        self.decision, self.action, self.stall = decision, action, stall
        self.asked: list[Any] = []

    async def __call__(self, ctx: Any, params: Any) -> types.ElicitResult:
        self.asked.append(params)
        if self.stall:
            await anyio.sleep_forever()
        content = {"decision": self.decision} if self.decision else None
        return types.ElicitResult(action=self.action, content=content)


async def test_an_sdk_client_on_stdio_is_asked_and_its_allow_runs_the_call(sidecar_client, write_config,
                                                                           fault_server_entry, tmp_path: Path) -> None:
    """The SDK's elicitation on a real stdio pipe. Deny, decline, no answer in time and an
    engine without elicitation are driven in memory (tests/gate/test_confirm_in_memory.py)."""
    config, audit = config_for(write_config, fault_server_entry, tmp_path, confirmSeconds=5)
    person = Person("allow")
    async with sidecar_client(config, elicitation=person) as c:
        await c.wait_for_tools({"f__echo"})
        result = await c.session.call_tool("f__echo", {"nonce": "n-1", "token": CANARY, "note": "x" * 500})
        assert text(result) == "n-1"
        message = person.asked[0].message
        assert "f__echo" in message and "'f'" in message and "n-1" in message
        assert CANARY not in message and "[redacted]" in message and "(cut: 500 characters in all)" in message
    assert decisions(audit).count(("confirm", "allow")) == 1


def _http_client(url: str, token: str, person: Person, mode: str) -> Any:
    warnings.simplefilter("ignore", DeprecationWarning)
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return Client(streamable_http_client(url, http_client=http), mode=mode, elicitation_callback=person)


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_http_allow_and_deny_on_both_revisions(write_config, fault_server_entry, tmp_path: Path,
                                                     mode: str) -> None:
    config, audit = config_for(write_config, fault_server_entry, tmp_path)
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc:
        for person, allowed in ((Person("allow"), True), (Person("deny"), False)):
            async with _http_client(sc.url, sc.token, person, mode) as client:
                with anyio.fail_after(30):
                    result = await client.call_tool("f__echo", {"nonce": "h-1", "api_key": CANARY})
                assert (text(result) == "h-1") is allowed, text(result)
                assert len(person.asked) == 1 and CANARY not in person.asked[0].message
    steps = decisions(audit)
    if mode == MODERN:  # the first round asks (the question is the result), the retry decides
        assert steps.count(("confirm", "ask")) == 2
    assert steps.count(("confirm", "allow")) == 1 and steps.count(("confirm", "deny")) == 1


def _modern_headers(sc: Any, name: str) -> dict[str, str]:
    return sc.headers(**{"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": name})


async def _stateless_call(client: aiohttp.ClientSession, sc: Any, arguments: dict[str, Any],
                          state: str | None = None, decision: str = "allow") -> dict[str, Any]:
    params: dict[str, Any] = {"name": "f__echo", "arguments": arguments, "_meta": {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}}
    if state is not None:
        params["requestState"] = state
        params["inputResponses"] = {"confirm": {"action": "accept", "content": {"decision": decision}}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    async with client.post(sc.url, json=body, headers=_modern_headers(sc, "f__echo")) as response:
        assert response.content_type == "application/json"
        answer = await response.json()
        if "error" in answer:  # a refused state: invalid params, and HTTP 400 on the stateless front
            assert response.status == 400 and answer["error"]["code"] == -32602, answer
            return {"refused": answer["error"]["message"]}
        result: dict[str, Any] = answer["result"]
        return result


def _said(result: dict[str, Any]) -> str:
    return "".join(c.get("text", "") for c in result.get("content", []))


def _refused(result: dict[str, Any]) -> bool:
    """A state the sidecar cannot honour gets one answer, whichever check failed."""
    return result.get("refused", "").startswith("params.requestState is not valid")


async def test_sealed_states_refuse_tampering_replay_other_arguments_foreign_and_expired(
        write_config, fault_server_entry, tmp_path: Path) -> None:
    config, _ = config_for(write_config, fault_server_entry, tmp_path)
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc, aiohttp.ClientSession() as client:
        asked = await _stateless_call(client, sc, {"nonce": "s-1"})
        assert asked["resultType"] == "input_required"
        question = asked["inputRequests"]["confirm"]
        assert question["method"] == "elicitation/create" and "f__echo" in question["params"]["message"]
        state = asked["requestState"]
        tampered = state[:-2] + ("A" if state[-2] != "A" else "B") + state[-1]
        refused = await _stateless_call(client, sc, {"nonce": "s-1"}, tampered)
        assert _refused(refused)
        other = await _stateless_call(client, sc, {"nonce": "s-2"}, state)  # bound to the arguments
        assert _refused(other)
        assert _said(await _stateless_call(client, sc, {"nonce": "s-1"}, state)) == "s-1"
        replayed = await _stateless_call(client, sc, {"nonce": "s-1"}, state)
        assert _refused(replayed)
        declined_state = (await _stateless_call(client, sc, {"nonce": "s-3"}))["requestState"]
        declined = await _stateless_call(client, sc, {"nonce": "s-3"}, declined_state, decision="deny")
        assert declined["isError"] is True and "s-3" not in _said(declined)
        fresh = (await _stateless_call(client, sc, {"nonce": "s-4"}))["requestState"]
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as other_sc, aiohttp.ClientSession() as client:
        foreign = await _stateless_call(client, other_sc, {"nonce": "s-4"}, fresh)  # another process's key
        assert _refused(foreign)
    expiring, _ = config_for(write_config, fault_server_entry, tmp_path, confirmStateSeconds=0)
    async with open_http_sidecar(expiring, tmp_path, log_level="INFO") as sc, aiohttp.ClientSession() as client:
        stale = (await _stateless_call(client, sc, {"nonce": "s-5"}))["requestState"]
        assert _refused(await _stateless_call(client, sc, {"nonce": "s-5"}, stale))
