"""`sidecar.wire.hello`: the answer to `initialize`, and the early answer to bytes the
engine wrote before the runtime loaded. Only a whole, valid `initialize` first line is
answered early; everything else goes back to the stdio front unread, byte for byte."""

from __future__ import annotations

import json

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from sidecar.wire import Answer, encode_event
from sidecar.wire.hello import answer_waiting, hello_of, offer, starting_capabilities
from sidecar.wire.versions import HANDSHAKE_VERSIONS

PARAMS = {"protocolVersion": "2025-03-26", "capabilities": {"roots": {}}, "clientInfo": {"name": "e", "version": "1"}}
INIT = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": PARAMS}).encode()
REST = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n{"jsonrpc":"2.0","id":8,"method":"tools/list"}\n'


def test_a_waiting_initialize_is_answered_and_the_rest_handed_on() -> None:
    caps = starting_capabilities(2)
    early, answer = answer_waiting(INIT + b"\r\n" + REST, caps)
    assert early.rest == REST
    assert early.hello is not None and early.hello.version == "2025-03-26"
    assert early.hello.client_capabilities == {"roots": {}} and early.hello.client_info["name"] == "e"
    assert answer == encode_event(Answer(7, hello_of(PARAMS, caps).result))
    decoded = msgspec.json.decode(answer)
    assert decoded["id"] == 7 and decoded["result"]["serverInfo"]["name"] == "omb-sidecar"


@given(st.sampled_from([
    b"",  # nothing yet
    INIT,  # no newline yet: a partial line
    b"\n\n",  # blank lines only
    b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n' + INIT + b"\n",  # another method first
    b'{"jsonrpc":"2.0","method":"initialize","params":{}}\n',  # a notification, not a request
    b'[' + INIT + b']\n',  # a batch
    b'{"jsonrpc":"2.0","id":1,"id":2,"method":"initialize","params":{}}\n',  # a duplicate key
    b'{"jsonrpc":"1.0","id":1,"method":"initialize","params":{}}\n',  # the wrong envelope
    b"not json\n",
]), st.binary(max_size=40))
def test_anything_else_is_left_to_the_dispatcher_byte_for_byte(waiting: bytes, tail: bytes) -> None:
    early, answer = answer_waiting(waiting + tail if waiting.endswith(b"\n") else waiting, starting_capabilities(1))
    assert answer == b"" and early.hello is None
    assert early.rest == (waiting + tail if waiting.endswith(b"\n") else waiting)


def test_capabilities_while_starting_and_the_offered_version() -> None:
    assert starting_capabilities(0) == {"tools": {"listChanged": True}}
    everything = starting_capabilities(1)
    assert everything == starting_capabilities(3)
    assert everything["resources"] == {"listChanged": True, "subscribe": True}
    assert {"prompts", "logging", "completions"} <= set(everything)
    ready: dict = {"tools": {"listChanged": True}}
    offer(ready, {"tools": {}, "resources": {}})
    assert ready == {"tools": {"listChanged": True}, "resources": {"listChanged": True, "subscribe": False}}
    assert hello_of({"protocolVersion": "1999-01-01"}, ready).version == HANDSHAKE_VERSIONS[-1]
    assert hello_of({"capabilities": "x", "clientInfo": 3}, ready).client_capabilities == {}
