"""The core of a 2026-07-28 server's questions, without sockets: reading an input-required
result (any bytes: a question, None, or one clear UpstreamError) and the loop of rounds
(answers and state sent back, the bound, a refusal's words)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.errors import UpstreamError
from sidecar.gate.asked import MAX_INPUT_ROUNDS, InputRefused, answer_rounds
from sidecar.upstream.input_required import read_input_required

FORM = {"method": "elicitation/create", "params": {"mode": "form", "message": "name?", "requestedSchema": {}}}


def raw(value: Any) -> msgspec.Raw:
    return msgspec.Raw(msgspec.json.encode(value))


def test_a_result_is_read_as_questions_or_left_alone() -> None:
    asked = read_input_required(raw({"resultType": "input_required", "inputRequests": {"a": FORM}, "requestState": "s"}))
    assert asked is not None and asked.state == "s" and asked.questions["a"].method == "elicitation/create"
    assert read_input_required(raw({"content": [], "resultType": "complete"})) is None
    assert read_input_required(raw({"content": [{"type": "text", "text": "input_required"}]})) is None
    assert read_input_required(raw([1, 2])) is None
    for bad in ({"resultType": "input_required"},
                {"resultType": "input_required", "inputRequests": {"a": {"method": "tools/call"}}},
                {"resultType": "input_required", "inputRequests": {"a": 5}}):
        with pytest.raises(UpstreamError):
            read_input_required(raw(bad))


@settings(max_examples=300, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(
                        ["resultType", "inputRequests", "requestState", "method", "params", "a"]), inner, max_size=4),
                    max_leaves=12))
def test_any_result_reads_as_questions_none_or_one_clear_error(value: Any) -> None:
    try:
        read_input_required(raw(value))
    except UpstreamError as exc:
        assert "asked for input" in exc.message


async def test_rounds_carry_answers_and_state_until_the_server_finishes() -> None:
    sent: list[dict[str, Any]] = []

    async def send(params: dict[str, Any]) -> msgspec.Raw:
        sent.append(params)
        if len(sent) == 1:
            return raw({"resultType": "input_required", "inputRequests": {"b": FORM}, "requestState": "two"})
        return raw({"content": [{"type": "text", "text": "done"}]})

    async def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"n": params["message"]}}

    first = raw({"resultType": "input_required", "inputRequests": {"a": FORM}, "requestState": "one"})
    final = await answer_rounds(first, {"name": "t"}, send, ask, "srv", None)
    assert msgspec.json.decode(final)["content"][0]["text"] == "done"
    assert [p["requestState"] for p in sent] == ["one", "two"]
    assert sent[0]["inputResponses"] == {"a": {"action": "accept", "content": {"n": "name?"}}}


async def test_the_bound_and_a_refusal_end_the_call_with_words() -> None:
    forever = raw({"resultType": "input_required", "inputRequests": {"a": FORM}, "requestState": "s"})

    async def send(params: dict[str, Any]) -> msgspec.Raw:
        return forever

    async def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {}}

    async def refuse(method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise InputRefused("the client did not declare the elicitation capability")

    bounded = msgspec.json.decode(await answer_rounds(forever, {}, send, ask, "srv", None))
    assert bounded["isError"] and f"more than {MAX_INPUT_ROUNDS} times" in bounded["content"][0]["text"]
    refused = msgspec.json.decode(await answer_rounds(forever, {}, send, refuse, "srv", None))
    assert "did not declare the elicitation capability" in refused["content"][0]["text"]
    with pytest.raises(UpstreamError, match="elicitation capability"):
        await answer_rounds(forever, {}, send, refuse, "srv", None, tool=False)
