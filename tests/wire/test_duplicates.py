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


def _render(value: Any, compact: bool = False) -> str:
    """JSON text where an object is a list of members, so a key may come twice; `compact`
    writes it as msgspec would (no blanks, text unescaped), so the re-encoding of a text
    with no repeat equals it."""
    if isinstance(value, tuple):
        colon = ":" if compact else " : "
        return "{" + ",".join(f"{_key(k)}{colon}{_render(v, compact)}" for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_render(v, compact) for v in value) + "]"
    return json.dumps(value, ensure_ascii=not compact)


def _key(key: str) -> str:
    return '"\\u003a"' if key == "\\u003a" else json.dumps(key)


values = st.recursive(
    st.none() | st.integers() | texts,
    lambda inner: st.lists(inner, max_size=4) | st.lists(st.tuples(keys, inner), max_size=4).map(tuple),
    max_leaves=20,
)


@given(values, st.booleans())
def test_a_repeated_key_is_found_exactly_where_the_reference_finds_one(value: Any, compact: bool) -> None:
    text = _render(value, compact).encode()
    assert has_duplicate_key(text, msgspec.json.decode(text)) == _reference(text)


@given(values)
def test_a_compact_text_equals_its_re_encoding_exactly_when_no_key_repeats(value: Any) -> None:
    """The one-comparison path is taken, and only, where it is sound: a compact text
    with no repeat is its own re-encoding; one with a repeat never is."""
    text = _render(value, compact=True).encode()
    if "\\u003a" not in text.decode():  # an escape msgspec writes back as a colon: never equal
        assert (msgspec.json.encode(msgspec.json.decode(text)) == text) == (not _reference(text))


def test_colons_inside_strings_and_escaped_colons() -> None:
    for text in (b'{"a:":"::","b":"\\u003a"}', b'{"\\u003a":1,"b":2}', b'{"x":{"a":1},"y":{"a":1}}'):
        assert not has_duplicate_key(text, msgspec.json.decode(text))
    for text in (b'{"\\u003a":1,":":2}', b'{"\\u003a":1,"\\u003A":2}', b'{"a":{"b":1,"b":2}}', b'[{"a":1,"a":{"c":"::"}}]',
                 b'{"a":1,"a":1}', b'{"id":1,"method":"m","id":1}'):
        assert has_duplicate_key(text, msgspec.json.decode(text))
