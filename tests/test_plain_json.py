"""`sidecar.plain_json` reads and writes what `json` does, without importing it: the same
documents, the same refusals, the same text, over generated values and the edges `json`
treats apart (byte order marks, UTF-16, constants, surrogates, hooks)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.plain_json import json_document, json_text
from tests.conftest import REPO

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                      max_leaves=20)


def _outcome(read: Any, data: bytes, **hooks: Any) -> str:
    try:
        return repr(read(data, **hooks))
    except ValueError as refused:  # what is refused is refused by both; their words may differ
        return f"refused {type(refused).__name__ if not isinstance(refused, json.JSONDecodeError) else 'ValueError'}"


def _same(data: bytes, **hooks: Any) -> None:
    assert _outcome(json_document, data, **hooks) == _outcome(json.loads, data, **hooks), data


@settings(max_examples=300, deadline=None)
@given(VALUES, st.booleans(), st.booleans(), st.booleans())
def test_text_is_json_dumps_text(value: Any, ascii: bool, sort_keys: bool, compact: bool) -> None:
    separators = (",", ":") if compact else (", ", ": ")
    expected = json.dumps(value, ensure_ascii=ascii, sort_keys=sort_keys, separators=separators)
    assert json_text(value, ascii=ascii, sort_keys=sort_keys, compact=compact) == expected
    _same(expected.encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize("data", [b'{"a": 1}', b" [1, 2.5, -0, 1e999] ", b"NaN", b"[Infinity, -Infinity]",
                                  b'{"a": 1, "a": 2}', b"", b" ", b"[1] x", b"[1,]", b'"\\ud800"', b'"\xed\xa0\x80"',
                                  b"\xef\xbb\xbf[1]", '[1, "é"]'.encode("utf-16"), '{"a": 2}'.encode("utf-16-le"),
                                  '[3]'.encode("utf-32-be"), b'"a\x01"', b"\xff", b"[" * 100 + b"]" * 100])
def test_documents_are_json_loads_documents(data: bytes) -> None:
    _same(data)


def test_hooks_are_called_as_json_calls_them() -> None:
    def pairs(found: list[tuple[str, Any]]) -> Any:
        return ("pairs", found)

    def constant(name: str) -> Any:
        raise LookupError(name)

    _same(b'{"a": {"b": 1}, "a": [2]}', object_pairs_hook=pairs)
    _same(b"[1, NaN]", object_pairs_hook=pairs, parse_constant=lambda name: name.lower())
    with pytest.raises(LookupError):
        json_document(b"[Infinity]", parse_constant=constant)
    with pytest.raises(TypeError, match="is not JSON serializable"):
        json_text({"a": object()})
    with pytest.raises(ValueError, match="Circular"):
        looped: list[Any] = []
        looped.append(looped)
        json_text(looped)


def test_neither_loads_json() -> None:
    code = ("import sys; from sidecar.plain_json import json_document, json_text; "
            "json_text(json_document(b'{\"a\": [1, 2.5, null, \"\\\\u00e9\"]}'), ascii=False, sort_keys=True); "
            "print(sorted(m for m in ('json', 're', 'typing') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, cwd=str(REPO), check=True)
    assert done.stdout.split() == ["[]"]
