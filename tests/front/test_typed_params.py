"""The engine's params, typed once by the dispatcher: whatever JSON value a request carries
as params, the dispatcher answers it exactly once, never with an internal error, and params
that do not fit the method's struct get -32602 naming the field.

In memory (`tests/harness`): one sidecar and one engine session for the whole module, on a
loop of its own, so Hypothesis can drive many requests (and shrink a failing one) without a
start per example.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sidecar.errors import INTERNAL_ERROR
from sidecar.wire.requests import PARAMS
from tests.harness import FakeServer, in_memory, tool
from tests.harness.engine import FakeEngine
from tests.harness.upstream import echo

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8)
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                    max_leaves=8)
# the keys the structs read, so the values meet their types; any other key too
KEYS = st.sampled_from(["name", "arguments", "uri", "cursor", "ref", "level", "taskId", "_meta", "task",
                        "protocolVersion", "capabilities", "clientInfo", "requestId", "type"]) | st.text(max_size=6)
REF = st.fixed_dictionaries({"type": st.sampled_from(["ref/prompt", "ref/resource", "ref/x"]) | JSON}, optional={
    "name": JSON, "uri": JSON})
PARAMS_VALUES = JSON | st.dictionaries(KEYS, JSON | REF, max_size=5)
# every typed method but the handshake (a second `initialize` would change the session)
METHODS = sorted(m for m in PARAMS if m != "initialize" and not m.startswith("notifications/")) + ["ping", "no/such"]


@pytest.fixture(scope="module")
def engine_on_loop() -> Iterator[tuple[asyncio.AbstractEventLoop, FakeEngine]]:
    loop = asyncio.new_event_loop()
    opened = in_memory({"f": FakeServer([tool("echo", text={"type": "string"})], on_call=echo)})
    sidecar = loop.run_until_complete(opened.__aenter__())
    engine = loop.run_until_complete(sidecar.engine())
    yield loop, engine
    loop.run_until_complete(opened.__aexit__(None, None, None))
    loop.close()


async def _one_answer(engine: FakeEngine, method: str, params: Any) -> dict[str, Any]:
    ident = engine.request(method, params)
    answer = await engine.answer_to(ident)
    await engine.roundtrip("ping")  # anything still owed for `ident` would be out by now
    await engine.roundtrip("tools/list")  # (and past a handler's own await)
    twice = [f for f in engine.frames if f.get("id") == ident and "method" not in f]
    assert len(twice) == 1, twice
    return answer


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(METHODS), params=PARAMS_VALUES)
def test_any_params_get_one_answer_and_no_internal_error(
        engine_on_loop: tuple[asyncio.AbstractEventLoop, FakeEngine], method: str, params: Any) -> None:
    loop, engine = engine_on_loop
    answer = loop.run_until_complete(asyncio.wait_for(_one_answer(engine, method, params), 10))
    assert "result" in answer or answer["error"]["code"] != INTERNAL_ERROR, answer


@pytest.mark.parametrize(("method", "params", "words"), [
    ("tools/call", {"name": 5}, "Expected `str`, got `int` - at `params.name`"),
    ("tools/call", {}, "Object missing required field `name` - at `params`"),
    ("tools/call", {"name": "f__echo", "arguments": [1]}, "got `array` - at `params.arguments`"),
    ("tools/call", {"name": "f__echo", "_meta": "x"}, "got `str` - at `params._meta`"),
    ("completion/complete", {"ref": {"type": "ref/other"}}, "Invalid value 'ref/other' - at `params.ref.type`"),
    ("completion/complete", {"ref": {"type": "ref/prompt"}}, "missing required field `name` - at `params.ref`"),
    ("resources/read", {"uri": None}, "got `null` - at `params.uri`"),
    ("tools/list", {"cursor": 3}, "got `int` - at `params.cursor`"),
])
async def test_params_that_do_not_fit_are_refused_naming_the_field(method: str, params: Any, words: str) -> None:
    async with in_memory({"f": FakeServer([tool("echo", text={"type": "string"})], on_call=echo)}) as sidecar:
        engine = await sidecar.engine()
        answer = await engine.roundtrip(method, params)
    assert answer["error"]["code"] == -32602, answer
    assert answer["error"]["message"].startswith(f"invalid params for {method}: "), answer
    assert words in answer["error"]["message"], answer


async def test_fields_the_struct_does_not_name_still_reach_the_upstream() -> None:
    """Typing reads what the sidecar needs; a call's other fields are not dropped on the way."""
    async with in_memory({"f": FakeServer([tool("echo", text={"type": "string"})], on_call=echo)}) as sidecar:
        engine = await sidecar.engine()
        answer = await engine.roundtrip("tools/call", {"name": "f__echo", "arguments": {"text": "hi"},
                                                       "_meta": {"progressToken": "p", "note": 1}})
        sent = sidecar.upstream("f").frames("tools/call")[-1]["params"]
    assert answer["result"]["content"][0]["text"] == "hi"
    assert sent["arguments"] == {"text": "hi"} and sent["_meta"]["note"] == 1
    assert sent["_meta"]["progressToken"] != "p"  # the sidecar's own token upstream, never the engine's
