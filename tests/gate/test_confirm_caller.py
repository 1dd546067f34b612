""""Allow once" holds once (issue 22, class 8): a shared sealing key without a shared
record of used states is refused at start, in words that say what to set; and a sealed
confirmation state is bound to its caller, so another caller's state is refused exactly
like a forged one (in memory, over many identities; and end to end, two bearer tokens
on one real HTTP sidecar)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sidecar.config import parse_config
from sidecar.errors import ConfigError
from sidecar.gate.confirmation.sealed import Sealer
from tests.http.http_support import open_http_sidecar

KEY = bytes(range(32))
CALL = {"bot": "b", "face": "f", "tool": "s__delete", "arguments": {"id": 1}}
MODERN = "2026-07-28"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40), st.text(max_size=40))
def test_a_state_made_for_one_caller_is_refused_to_any_other(mine: str, theirs: str) -> None:
    assume(mine != theirs)
    sealer = Sealer(KEY)
    state = sealer.seal(sealer.new_claim(**CALL, seconds=60, caller=mine))  # type: ignore[arg-type]
    assert not sealer.redeem(state, **CALL, caller=theirs)  # type: ignore[arg-type]
    assert not Sealer(KEY).redeem(state, **CALL, caller=theirs)  # type: ignore[arg-type]  # a replica
    assert sealer.redeem(state, **CALL, caller=mine)  # type: ignore[arg-type]  # the refusal spent nothing
    assert not sealer.redeem(state, **CALL, caller=mine)  # type: ignore[arg-type]


def _document(**top: Any) -> dict[str, Any]:
    return {"policy": {"requireConfirmation": True, "confirmKeyEnv": "OMB_CONFIRM_KEY"}, **top, "mcpServers": {}}


def test_a_shared_key_without_a_shared_spent_set_is_refused_in_words() -> None:
    with pytest.raises(ConfigError) as refused:
        parse_config(_document(), {})
    assert refused.value.path == "policy.confirmKeyEnv"
    assert "store.url" in refused.value.message and "Allow once" in refused.value.message
    config = parse_config(_document(store={"url": "redis://127.0.0.1:6379/0"}), {})
    assert config.policy.confirm_key_env == "OMB_CONFIRM_KEY"
    assert parse_config({"policy": {"requireConfirmation": True}, "mcpServers": {}}, {}).policy.confirm_key_env is None


def test_the_process_refuses_to_start_and_says_what_to_set(write_config: Any) -> None:
    config = write_config({}, policy={"requireConfirmation": True, "confirmKeyEnv": "OMB_CONFIRM_KEY"})
    done = subprocess.run([sys.executable, "-m", "sidecar", "--config", str(config)], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "policy.confirmKeyEnv" in done.stderr and "store.url" in done.stderr and "Traceback" not in done.stderr


async def _call(http: aiohttp.ClientSession, sc: Any, token: str, state: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "f__echo", "arguments": {"nonce": "c-1"}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}}
    if state is not None:
        params["requestState"] = state
        params["inputResponses"] = {"confirm": {"action": "accept", "content": {"decision": "allow"}}}
    headers = {**sc.headers(**{"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "f__echo"}),
               "Authorization": f"Bearer {token}"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    async with http.post(sc.url, json=body, headers=headers) as response:
        answer = await response.json()
        if "error" in answer:  # a state the sidecar cannot honour: invalid params
            return {"refused": answer["error"]["message"]}
        result: dict[str, Any] = answer["result"]
        return result


def _said(result: dict[str, Any]) -> str:
    return "".join(c.get("text", "") for c in result.get("content", []))


@pytest.mark.e2e
async def test_another_bearer_cannot_redeem_a_callers_state(write_config: Any, fault_server_entry: Any,
                                                            tmp_path: Path) -> None:
    other = "other-caller-token-0123456789abcdef"
    entry = {**fault_server_entry(), "consequential": ["echo"], "pinning": "off"}
    config = write_config({"f": entry}, policy={"requireConfirmation": True, "confirmSeconds": 5})
    async with open_http_sidecar(config, tmp_path, log_level="INFO", more_tokens=(other,)) as sc, \
            aiohttp.ClientSession() as http:
        state = (await _call(http, sc, sc.token))["requestState"]
        stolen = await _call(http, sc, other, state)
        assert stolen["refused"].startswith("params.requestState is not valid") and "c-1" not in str(stolen)
        assert _said(await _call(http, sc, sc.token, state)) == "c-1"  # its own caller still can, once
