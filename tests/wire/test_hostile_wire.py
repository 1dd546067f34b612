"""The pure pieces that keep hostile frames from breaking the sidecar: the depth measure,
the reading of a dropped frame's id from its edges, the framer's edges, and the repair
of bad text in upstream frames. Each is checked against a reference or a generator."""

from __future__ import annotations

import json
import time
from typing import Any

import msgspec
from hypothesis import given, settings, strategies as st

from sidecar.wire import LineFramer, decode_engine_frame, decode_upstream_frame
from sidecar.wire.depth import MAX_DEPTH, nesting_depth, too_deep
from sidecar.wire.repair import repair_frame
from sidecar.wire.salvage import DroppedFrame, salvage

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet=st.characters(codec="utf-8")),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=30,
)


def reference_depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((reference_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((reference_depth(v) for v in value.values()), default=0)
    return 0


@given(json_values, st.sampled_from([None, 0, 2]))
def test_depth_matches_a_recursive_reference(value: Any, indent: int | None) -> None:
    text = json.dumps(value, indent=indent).encode()
    assert nesting_depth(text) == reference_depth(value)
    assert too_deep(text, 3) == (reference_depth(value) > 3)


@given(st.integers(min_value=0, max_value=3000), st.sampled_from(["[", '{"a":', '[{"k":']),
       st.text(alphabet='[]{}"\\ab', max_size=40))
def test_depth_of_nesting_with_brackets_in_strings(depth: int, opener: str, noise: str) -> None:
    closer = {"[": "]", '{"a":': "}", '[{"k":': "}]"}[opener]
    levels = depth * (2 if opener == '[{"k":' else 1)
    text = (opener * depth + json.dumps(noise) + closer * depth).encode()
    assert nesting_depth(text) == levels
    assert too_deep(text) == (levels > MAX_DEPTH)


def test_unclosed_and_100000_deep_text_is_too_deep_and_measured_fast() -> None:
    for text in (b"[" * 100_000, b"{" * 100_000, b'{"a":' * 100_000, b"[" * 100_000 + b"]" * 100_000):
        started = time.perf_counter()
        assert too_deep(text)
        assert time.perf_counter() - started < 0.2


@given(st.integers(min_value=MAX_DEPTH - 3, max_value=MAX_DEPTH + 200))
def test_engine_frames_past_the_limit_are_refused_with_their_id(depth: int) -> None:
    frame = (b'{"jsonrpc":"2.0","id":"d","method":"tools/call","params":{"name":"x","arguments":{"v":'
             + b"[" * depth + b"]" * depth + b"}}}")
    message = decode_engine_frame(frame)
    if depth + 3 > MAX_DEPTH:
        assert (message.code, message.id) == (-32700, "d")  # type: ignore[union-attr]
        assert f"{MAX_DEPTH} levels" in message.message  # type: ignore[union-attr]
    else:
        assert message.method == "tools/call"  # type: ignore[union-attr]


def test_decoders_never_raise_recursion_error() -> None:
    for depth in (900, 1_000, 10_000):
        body = b"[" * depth + b"]" * depth
        frame = decode_upstream_frame(b'{"jsonrpc":"2.0","id":1,"result":' + body + b"}")  # never raises
        assert frame is None or depth < 1_000
        assert decode_engine_frame(body).code == -32700  # type: ignore[union-attr]


scalars = st.one_of(st.integers(), st.text(max_size=12), st.booleans(), st.none())
ids = st.one_of(st.integers(min_value=-(2**40), max_value=2**40), st.text(max_size=12))


@given(ids, st.dictionaries(st.text(min_size=1, max_size=6).filter(lambda k: k not in ("id", "method")), scalars,
                            max_size=3), st.booleans(), st.integers(min_value=100, max_value=20_000))
def test_salvage_finds_a_top_level_id_before_or_after_the_big_part(ident: Any, others: dict[str, Any],
                                                                   after: bool, size: int) -> None:
    big = {"content": [{"type": "text", "text": "x" * size}], "nested": {"id": "not-this-one"}}
    frame = {"jsonrpc": "2.0", **others, "result": big, "id": ident} if after else \
        {"jsonrpc": "2.0", "id": ident, **others, "result": big}
    text = json.dumps(frame).encode()
    found = salvage(text[:4096], text[-4096:])
    assert found.id == ident and found.method is None


@given(st.integers(min_value=5_000, max_value=50_000))
def test_salvage_never_takes_an_id_from_inside_the_result(size: int) -> None:
    text = json.dumps({"jsonrpc": "2.0", "result": {"a": "x" * size, "id": 9, "b": {"id": 3}}}).encode()
    assert salvage(text[:4096], text[-4096:]).id is None
    note = json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"d": "y" * size}}).encode()
    assert salvage(note[:4096], note[-4096:]).method == "notifications/message"


@given(st.binary(min_size=1, max_size=300).filter(lambda b: b"\n" not in b), st.integers(min_value=1, max_value=97))
def test_the_framer_hands_over_each_dropped_lines_size_and_edges(line: bytes, chunk: int) -> None:
    dropped: list[DroppedFrame] = []
    framer = LineFramer(16, dropped.append)
    stream = line + b"\nok\n"
    out: list[bytes] = []
    for start in range(0, len(stream), chunk):
        out += framer.feed(stream[start:start + chunk])
    assert out[-1] == b"ok"
    if len(line.rstrip(b"\r")) > 16 and len(line) > 16:
        assert len(dropped) == 1 and dropped[0].size == len(line)
        assert line.startswith(dropped[0].head) and line.rstrip(b"\r").endswith(dropped[0].tail)
        assert "16-byte line cap" in dropped[0].why
    else:
        assert dropped == []


BAD_STRINGS = [b'"\\ud800"', b'"a\\udfffb"', b'"\\x41"', b'"\xed\xa0\x80"', b'"\xff\xfe"', b'"tab\there\x01"',
               b'"\\ud83d\\ud83d\\ude00"', b"1e400", b"-1e999", b"NaN", b'"\\u12"']


@settings(max_examples=200)
@given(st.lists(json_values, min_size=1, max_size=8), st.data())
def test_repair_changes_only_the_bad_values(items: list[Any], data: st.DataObject) -> None:
    bad_at = data.draw(st.integers(min_value=0, max_value=len(items) - 1))
    bad = data.draw(st.sampled_from(BAD_STRINGS))
    parts = [msgspec.json.encode(i) for i in items]
    parts[bad_at] = b'{"name":"t","description":' + bad + b"}"
    frame = b'{"jsonrpc":"2.0","id":5,"result":{"tools":[' + b",".join(parts) + b"]}}"
    if bad not in (b'"\xed\xa0\x80"', b'"\xff\xfe"', b"1e400", b"-1e999"):  # the envelope skips those
        assert decode_upstream_frame(frame) is None
    repair = repair_frame(frame)
    assert repair is not None and repair.values >= 1 and repair.reasons
    tools = msgspec.json.decode(repair.frame)["result"]["tools"]
    assert len(tools) == len(items)
    for n, (item, tool) in enumerate(zip(items, tools)):
        if n != bad_at:
            assert tool == item
    assert tools[bad_at]["name"] == "t"


def test_repair_refuses_what_is_not_json_even_so() -> None:
    assert repair_frame(b'{"jsonrpc":"2.0","id":1,"result":') is None
    assert repair_frame(b"not json") is None
