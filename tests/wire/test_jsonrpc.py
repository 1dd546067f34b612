import json

import msgspec
import pytest
from hypothesis import given, strategies as st

from sidecar.errors import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR
from sidecar.wire import (
    FrameRejected,
    Notification,
    Request,
    Response,
    decode_engine_frame,
    decode_upstream_frame,
    encode_error,
    encode_result,
)


def frame(**fields: object) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **fields}).encode()


def test_request_notification_and_response_are_told_apart() -> None:
    assert decode_engine_frame(frame(id=1, method="ping")) == Request(1, "ping", {})
    assert decode_engine_frame(frame(method="notifications/initialized")) == Notification("notifications/initialized", {})
    assert decode_engine_frame(frame(id="a", result={"x": 1})) == Response("a", {"x": 1}, None)


@pytest.mark.parametrize(
    ("line", "code", "echo"),
    [
        (b"not json", PARSE_ERROR, None),
        (b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}', PARSE_ERROR, None),
        (b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1,"a":2}}', PARSE_ERROR, 1),
        (b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"v":NaN}}', PARSE_ERROR, 1),
        (b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"v":Infinity}}', PARSE_ERROR, 1),
        (b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"v":1e999}}', PARSE_ERROR, 1),
        (b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"v":"\\ud800"}}', PARSE_ERROR, 1),
        (b'{"jsonrpc":"2.0","id":1e999,"method":"x"}', PARSE_ERROR, None),
        (b'{"jsonrpc":"2.0","id":1,"result":{"v":1e999}}', PARSE_ERROR, None),  # an answer: nothing to end
        (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', INVALID_REQUEST, None),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', INVALID_REQUEST, None),
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', INVALID_REQUEST, None),
        (b'{"jsonrpc":"2.0","id":[1],"method":"ping"}', INVALID_REQUEST, None),
        (b'{"jsonrpc":"1.0","id":7,"method":"ping"}', INVALID_REQUEST, 7),
        (b'{"id":7,"method":"ping"}', INVALID_REQUEST, 7),
        (b'{"jsonrpc":"2.0","id":7,"method":5}', INVALID_REQUEST, 7),
        (b'{"jsonrpc":"2.0","id":7}', INVALID_REQUEST, 7),
        (b"[]", INVALID_REQUEST, None),
        (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', INVALID_REQUEST, None),
        (b"42", INVALID_REQUEST, None),
        (b'"text"', INVALID_REQUEST, None),
        (b'{"jsonrpc":"2.0","id":7,"method":"x","params":[1]}', INVALID_PARAMS, 7),
        (b'{"jsonrpc":"2.0","id":7,"method":"x","params":"s"}', INVALID_PARAMS, 7),
        (b'{"jsonrpc":"2.0","id":7,"method":"x","params":null}', INVALID_PARAMS, 7),
        (b'{"jsonrpc":"2.0","id":7,"result":1,"error":{"code":1}}', INVALID_REQUEST, None),
    ],
)
def test_refusals_carry_the_right_code(line: bytes, code: int, echo: object) -> None:
    rejected = decode_engine_frame(line)
    assert isinstance(rejected, FrameRejected)
    assert (rejected.code, rejected.id) == (code, echo)


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    message = decode_engine_frame(b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"a\xffb"}}')
    assert isinstance(message, Request)
    assert message.params["s"] == "a\ufffdb"


@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_raise(line: bytes) -> None:
    assert decode_engine_frame(line) is not None
    decode_upstream_frame(line)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@given(st.integers(-(2**31), 2**31) | st.text(max_size=8), st.text(min_size=1, max_size=20),
       st.dictionaries(st.text(max_size=6), json_values, max_size=5))
def test_valid_requests_round_trip(ident: object, method: str, params: dict) -> None:
    decoded = decode_engine_frame(frame(id=ident, method=method, params=params))
    assert decoded == Request(ident, method, params)  # type: ignore[arg-type]


def test_upstream_result_stays_raw_and_is_spliced_verbatim() -> None:
    upstream = decode_upstream_frame(b'{"jsonrpc":"2.0","id":3,"result":{"b": [1, 2],  "a":"x"}}')
    assert upstream is not None and upstream.id == 3
    assert bytes(upstream.result) == b'{"b": [1, 2],  "a":"x"}'
    assert encode_result("e-1", upstream.result) == b'{"jsonrpc":"2.0","id":"e-1","result":{"b": [1, 2],  "a":"x"}}\n'


def test_upstream_frames_with_bad_ids_or_no_json_are_skipped() -> None:
    assert decode_upstream_frame(b"Server started on stdio") is None
    assert decode_upstream_frame(b'{"jsonrpc":"2.0","id":true,"result":{}}') is None
    assert decode_upstream_frame(b'{"jsonrpc":"2.0","id":1.5,"result":{}}') is None


def test_error_encoding() -> None:
    assert msgspec.json.decode(encode_error(None, -32700, "bad")) == {
        "jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "bad"}}
