"""The repeated-key check that rides on the one decode, against a reference that sees
every member (the standard library's pairs hook), on texts built to repeat keys at any
depth, with colons inside strings and colons spelled as escapes."""

from __future__ import annotations

import json
from typing import Any

import msgspec
from hypothesis import given, strategies as st

from sidecar.wire.duplicates import has_duplicate_key

keys = st.sampled_from(["a", "b", "a:b", ":", "\\u003a", "k"])
texts = st.text(alphabet='ab:"\\,{}[] \u00e9', max_size=8)


def _reference(text: bytes) -> bool:
    repeated = False

    def pairs(members: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal repeated
        repeated |= len({k for k, _ in members}) != len(members)
        return dict(members)

    json.loads(text, object_pairs_hook=pairs)
    return repeated


def _render(value: Any) -> str:
    """JSON text where an object is a list of members, so a key may come twice."""
    if isinstance(value, tuple):
        return "{" + ",".join(f"{_key(k)} : {_render(v)}" for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_render(v) for v in value) + "]"
    return json.dumps(value)


def _key(key: str) -> str:
    return '"\\u003a"' if key == "\\u003a" else json.dumps(key)


values = st.recursive(
    st.none() | st.integers() | texts,
    lambda inner: st.lists(inner, max_size=4) | st.lists(st.tuples(keys, inner), max_size=4).map(tuple),
    max_leaves=20,
)


@given(values)
def test_a_repeated_key_is_found_exactly_where_the_reference_finds_one(value: Any) -> None:
    text = _render(value).encode()
    assert has_duplicate_key(text, msgspec.json.decode(text)) == _reference(text)


def test_colons_inside_strings_and_escaped_colons() -> None:
    for text in (b'{"a:":"::","b":"\\u003a"}', b'{"\\u003a":1,"b":2}', b'{"x":{"a":1},"y":{"a":1}}'):
        assert not has_duplicate_key(text, msgspec.json.decode(text))
    for text in (b'{"\\u003a":1,":":2}', b'{"\\u003a":1,"\\u003A":2}', b'{"a":{"b":1,"b":2}}', b'[{"a":1,"a":{"c":"::"}}]'):
        assert has_duplicate_key(text, msgspec.json.decode(text))
