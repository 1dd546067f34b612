"""The engine frame's one-step decode of a plain request (`_PlainRequest`) judges every
frame exactly as the generic decode and its member-by-member judgement do: generated
frames (ids of every JSON kind, methods, params or none, extra and repeated members, a
`jsonrpc` that is wrong, key orders, spacing) give the same message or the same refusal
either way."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.wire.jsonrpc import Request, _decode_generic, decode_engine_frame

_MISSING = object()

scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=False, allow_infinity=False),
                    st.text(max_size=8))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                      max_leaves=8)
members = st.fixed_dictionaries({
    "jsonrpc": st.one_of(st.just("2.0"), st.just(_MISSING), st.sampled_from(["1.0", "2", 2.0, None])),
    "id": st.one_of(st.integers(-2**64, 2**64), st.text(max_size=6), st.just(_MISSING), st.booleans(), st.none(),
                    st.floats(allow_nan=False, allow_infinity=False), st.lists(st.integers(), max_size=2)),
    "method": st.one_of(st.sampled_from(["tools/call", "ping", "notifications/cancelled"]), st.just(_MISSING),
                        st.integers(), st.none()),
    "params": st.one_of(st.dictionaries(st.text(max_size=6), values, max_size=4), st.just(_MISSING), st.none(),
                        st.lists(st.integers(), max_size=2), st.text(max_size=3)),
    "result": st.one_of(st.just(_MISSING), values),
    "extra": st.one_of(st.just(_MISSING), values),
})

# Mostly plain requests, each with one thing that may be off: the one-step way is taken
# often, and each member is seen out of its shape too.
nearly_plain = st.fixed_dictionaries({
    "jsonrpc": st.sampled_from(["2.0"] * 6 + ["2.1", _MISSING]),
    "id": st.one_of(st.integers(-2**64, 2**64), st.text(max_size=6), st.integers(-2**64, 2**64), st.text(max_size=6),
                    st.booleans(), st.just(1.5), st.just(_MISSING)),
    "method": st.one_of(st.sampled_from(["tools/call", "initialize", "ping"]), st.text(max_size=4), st.just(None)),
    "params": st.one_of(st.dictionaries(st.text(max_size=6), values, max_size=4), st.just(_MISSING),
                        st.dictionaries(st.text(max_size=6), values, max_size=4), st.none()),
    "result": st.sampled_from([_MISSING] * 7 + [1]),
    "extra": st.sampled_from([_MISSING] * 7 + ["x"]),
})


def _text(frame: dict[str, Any], order: list[str], spaced: bool, repeat: str | None) -> bytes:
    parts = [(key, value) for key, value in ((k, frame[k]) for k in order) if value is not _MISSING]
    if repeat is not None and parts:
        parts.append(next((p for p in parts if p[0] == repeat), parts[0]))
    sep = ", " if spaced else ","
    colon = ": " if spaced else ":"
    body = sep.join(f"{json.dumps(key)}{colon}{json.dumps(value, separators=(sep, colon))}" for key, value in parts)
    return ("{" + body + "}").encode()


@settings(max_examples=600, deadline=None)
@given(members, st.permutations(["jsonrpc", "id", "method", "params", "result", "extra"]), st.booleans(),
       st.one_of(st.none(), st.sampled_from(["id", "method", "params", "jsonrpc"])))
def test_a_plain_request_is_judged_as_the_generic_decode_judges_it(frame: dict[str, Any], order: list[str],
                                                                  spaced: bool, repeat: str | None) -> None:
    line = _text(frame, order, spaced, repeat)
    assert decode_engine_frame(line) == _decode_generic(line), line


@settings(max_examples=600, deadline=None)
@given(nearly_plain, st.permutations(["jsonrpc", "id", "method", "params", "result", "extra"]), st.booleans(),
       st.sampled_from([None] * 6 + ["id", "params"]))
def test_a_nearly_plain_request_is_judged_as_the_generic_decode_judges_it(frame: dict[str, Any], order: list[str],
                                                                         spaced: bool, repeat: str | None) -> None:
    line = _text(frame, order, spaced, repeat)
    assert decode_engine_frame(line) == _decode_generic(line), line


def test_the_common_request_takes_the_one_step_way() -> None:
    line = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a","arguments":{"x":[1,{"y":":"}]}}}'
    assert decode_engine_frame(line) == Request(7, "tools/call", {"name": "a", "arguments": {"x": [1, {"y": ":"}]}})
    assert decode_engine_frame(b'{"jsonrpc":"2.0","id":"q","method":"ping"}') == Request("q", "ping", {})
