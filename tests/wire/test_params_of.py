"""The common `tools/call` params (a string name and object arguments, nothing else) are
typed without `msgspec.convert`: the struct is the one `convert` makes, and every other
shape still meets `convert`'s judgement."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from sidecar.errors import EngineInputError
from sidecar.wire.requests import CallParams, params_of

SHAPES: list[dict[str, Any]] = [
    {"name": "f__echo", "arguments": {"text": "hi", "n": [1, {"a": None}]}},
    {"name": "f__echo", "arguments": {}},
    {"name": "f__echo"},
    {"name": "f__echo", "arguments": None},
    {"name": "f__echo", "arguments": {"a": 1}, "_meta": {"progressToken": 3}},
    {"name": "f__echo", "arguments": {"a": 1}, "task": {"ttl": 5}},
    {"name": "f__echo", "other": 2},
]


@pytest.mark.parametrize("params", SHAPES)
def test_typed_params_equal_converts(params: dict[str, Any]) -> None:
    assert params_of("tools/call", params) == msgspec.convert(params, CallParams)


@pytest.mark.parametrize("params", [{"name": 3, "arguments": {}}, {"name": "x", "arguments": [1]},
                                    {"name": None, "arguments": {}}, {"arguments": {}, "title": "x"}])
def test_params_that_do_not_fit_are_refused_naming_the_field(params: dict[str, Any]) -> None:
    with pytest.raises(EngineInputError) as refused:
        params_of("tools/call", params)
    assert "params" in refused.value.message
