"""A 2026-07-28 engine and a 2026-07-28 server (the mcp SDK's, `initialize` refused): the
server's input-required result reaches the engine under the server's own keys, its state
inside a sealed state of the sidecar's (`sidecar.front.eras.relayed`), and comes back to
the server unchanged, round by round. The sidecar's state is bound and accepted once: an
altered, replayed, foreign or other-arguments state is refused with invalid params, as the
server refuses its own; a question the engine did not declare is named; and a
consequential call is confirmed once, before its server asks, not again on the round
that answers the server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from sidecar.front.eras.relayed import PREFIX
from tests.conftest import read_event_file
from tests.eras.eras_support import open_modern_server, stateless_call, wait_for_tools
from tests.http.http_support import open_http_sidecar

pytestmark = pytest.mark.e2e

OTHER = "other-token-0123456789abcdef"


def _config(write_config, url: str, **top: Any) -> Path:
    path: Path = write_config({"modern": {"type": "http", "url": url, "pinning": "off"}}, **top)
    return path


def _asked(status: int, message: dict[str, Any]) -> dict[str, Any]:
    assert status == 200, message
    result: dict[str, Any] = message["result"]
    assert result["resultType"] == "input_required", message
    assert result["requestState"].startswith(PREFIX)
    return result


def _invalid(status: int, message: dict[str, Any]) -> bool:
    return status == 400 and message["error"]["code"] == -32602 and "requestState" in message["error"]["message"]


def _answer(result: dict[str, Any], **content: Any) -> dict[str, Any]:
    return {key: {"action": "accept", "content": content} for key in result["inputRequests"]}


async def test_the_servers_keys_and_state_pass_through_and_a_bad_state_is_refused(write_config,
                                                                                  tmp_path: Path) -> None:
    events = tmp_path / "modern.jsonl"
    async with open_modern_server(events) as url, \
            open_http_sidecar(_config(write_config, url), tmp_path, log_level="INFO", more_tokens=(OTHER,)) as sc, \
            aiohttp.ClientSession() as http:
        await wait_for_tools(http, sc.url, sc.token, "modern__echo")
        call = ("modern__chain", {})
        first = _asked(*await stateless_call(http, sc.url, sc.token, *call))
        assert list(first["inputRequests"]) == ["who"]  # the server's key, not one of the sidecar's
        state = first["requestState"]
        answers = _answer(first, name="ada")
        altered = state[:-3] + ("AAA" if state[-3:] != "AAA" else "BBB")
        for bad in (altered, state + "-TAMPERED", PREFIX + "x" * 40):
            assert _invalid(*await stateless_call(http, sc.url, sc.token, *call, state=bad, responses=answers))
        assert _invalid(*await stateless_call(http, sc.url, sc.token, "modern__chain", {"more": 1}, state=state,
                                              responses=answers))
        assert _invalid(*await stateless_call(http, sc.url, OTHER, *call, state=state, responses=answers))
        second = _asked(*await stateless_call(http, sc.url, sc.token, *call, state=state, responses=answers))
        assert list(second["inputRequests"]) == ["model"] and second["requestState"] != state
        assert _invalid(*await stateless_call(http, sc.url, sc.token, *call, state=state, responses=answers))
        sampled = {"model": {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m"}}
        status, done = await stateless_call(http, sc.url, sc.token, *call, state=second["requestState"],
                                            responses=sampled)
    assert status == 200 and done["result"]["content"][0]["text"] == "chain: hello"
    states = [e["state"] for e in read_event_file(events) if e.get("tool") == "chain"]
    assert states == [None, "1", "2"]  # the server's own state, as it gave it, each round


async def test_a_question_the_engine_did_not_declare_is_named(write_config, tmp_path: Path) -> None:
    async with open_modern_server() as url, \
            open_http_sidecar(_config(write_config, url), tmp_path, log_level="INFO") as sc, \
            aiohttp.ClientSession() as http:
        await wait_for_tools(http, sc.url, sc.token, "modern__echo")
        status, message = await stateless_call(http, sc.url, sc.token, "modern__sample", {},
                                               capabilities={"elicitation": {"form": {}}})
    assert status == 200 and message["result"]["isError"]
    assert "did not declare the sampling capability" in message["result"]["content"][0]["text"]


async def test_a_consequential_call_is_confirmed_once_before_its_server_asks(write_config, tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    async with open_modern_server() as url:
        config = write_config({"modern": {"type": "http", "url": url, "pinning": "off", "consequential": ["form"]}},
                              policy={"requireConfirmation": True}, audit={"file": str(audit)})
        async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc, aiohttp.ClientSession() as http:
            await wait_for_tools(http, sc.url, sc.token, "modern__echo")
            call = ("modern__form", {})
            status, message = await stateless_call(http, sc.url, sc.token, *call)
            confirm = message["result"]
            assert list(confirm["inputRequests"]) == ["confirm"]  # the gate's question first
            allow = {"confirm": {"action": "accept", "content": {"decision": "allow"}}}
            asked = _asked(*await stateless_call(http, sc.url, sc.token, *call, state=confirm["requestState"],
                                                 responses=allow))
            assert list(asked["inputRequests"]) == ["who"]  # then the server's
            status, done = await stateless_call(http, sc.url, sc.token, *call, state=asked["requestState"],
                                                responses=_answer(asked, name="kim"))
    assert status == 200 and not done["result"].get("isError"), done
    assert json.loads(done["result"]["content"][0]["text"].split(": ", 1)[1])["content"] == {"name": "kim"}
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    steps = [(d["stage"], d["action"]) for r in records if r.get("tool") == "modern__form" for d in r["decisions"]]
    assert steps.count(("confirm", "ask")) == 1 and steps.count(("confirm", "allow")) == 2, steps
