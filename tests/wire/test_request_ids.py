"""Every request that carries a readable id gets its id back, however hostile the rest of
the frame (issue 22, class 11; RELIABILITY rule 4). Hypothesis builds request frames as
text, with the envelope's members in any order and hostile values anywhere outside the id:
numbers out of range, NaN and Infinity, 5,000-digit integers, lone surrogates, invalid
UTF-8, repeated keys inside `params`. Whether the frame is refused or served, the decode
names the request's id; an id given twice at the top is no id."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.config import parse_config
from sidecar.errors import PARSE_ERROR
from sidecar.front.dispatcher import Dispatcher
from sidecar.front.shutdown import answer_in_flight
from sidecar.hub import build_face
from sidecar.hub.session import EngineSession
from sidecar.wire import ErrorAnswer, Event, FrameRejected, Request, decode_engine_frame
from sidecar.wire.jsonrpc import refuse_dropped
from sidecar.wire.salvage import DroppedFrame

HOSTILE = [b"1e400", b"-1e400", b"NaN", b"Infinity", b"-Infinity", b"1" + b"0" * 5000, b'"\\ud800"', b'"\\udfff x"',
           b'"\xff\xfe"', b"123456789012345678901234567890", b'{"k":1,"k":2}', b"[1e999,{\"a\":NaN}]",
           b'"\\u0069d"', b'{"id":7,"method":"x"}']
_ids = st.integers(min_value=-(2**63), max_value=2**63 - 1) | st.text(max_size=20)
_hostile = st.sampled_from(HOSTILE)


@st.composite
def _params(draw: st.DrawFn) -> bytes:
    values = draw(st.lists(_hostile | st.sampled_from([b"1", b'"ok"', b"null", b"[]"]), min_size=1, max_size=5))
    values[draw(st.integers(0, len(values) - 1))] = draw(_hostile)  # at least one hostile value, anywhere
    members = b",".join(b'"a%d":%b' % (n, v) for n, v in enumerate(values))
    return b'{"name":"f__echo","arguments":{' + members + b"}}"


@st.composite
def _frames(draw: st.DrawFn) -> tuple[bytes, int | str]:
    ident = draw(_ids)
    members = [b'"jsonrpc":"2.0"', b'"id":' + json.dumps(ident).encode(), b'"method":"tools/call"',
               b'"params":' + draw(_params())]
    members += [b'"x%d":%b' % (n, v) for n, v in enumerate(draw(st.lists(_hostile, max_size=3)))]
    order = draw(st.permutations(members))
    return b"{" + b",".join(order) + b"}", ident


@settings(max_examples=250, deadline=None)
@given(_frames())
def test_the_id_comes_back_whatever_the_frame_holds(frame: tuple[bytes, int | str]) -> None:
    line, ident = frame
    decoded = decode_engine_frame(line)
    assert isinstance(decoded, (FrameRejected, Request)), decoded
    assert decoded.id == ident and type(decoded.id) is type(ident), (line[:300], decoded)


@settings(max_examples=100, deadline=None)
@given(_ids, _ids, _hostile)
def test_an_id_given_twice_at_the_top_is_no_id(first: int | str, second: int | str, hostile: bytes) -> None:
    line = b'{"jsonrpc":"2.0","id":%b,"method":"ping","params":{"v":%b},"id":%b}' % (
        json.dumps(first).encode(), hostile, json.dumps(second).encode())
    decoded = decode_engine_frame(line)
    assert isinstance(decoded, FrameRejected) and decoded.id is None and decoded.code == PARSE_ERROR


@settings(max_examples=100, deadline=None)
@given(_ids, st.booleans())
def test_a_dropped_line_is_refused_by_the_id_its_edges_show(ident: int | str, at_head: bool) -> None:
    idj = json.dumps(ident).encode()
    head = (b'{"jsonrpc":"2.0","id":%b,"method":"tools/call","params":{"v":"' % idj) if at_head else \
        b'{"jsonrpc":"2.0","method":"tools/call","params":{"v":"'
    tail = b'"}}' if at_head else b'"},"id":%b}' % idj
    refusal = refuse_dropped(DroppedFrame(10**8, "over the 1-byte line cap", head + b"x" * 100, b"x" * 100 + tail))
    assert refusal is not None and refusal.id == ident and "not read" in refusal.message
    answer = DroppedFrame(10**8, "over the cap", b'{"jsonrpc":"2.0","id":1,"result":{"v":"', b'"}}')
    assert refuse_dropped(answer) is None  # an answer to nothing the engine waits on: no reply


@settings(max_examples=60, deadline=None)
@given(_frames())
def test_a_session_answers_each_such_request_exactly_once(frame: tuple[bytes, int | str]) -> None:
    """Through the dispatcher, then the shutdown door: one answer under the id, never two."""
    line, ident = frame

    async def run() -> list[Event]:
        events: list[Event] = []
        session = EngineSession(emit=events.append)
        face = build_face(parse_config({"bot": {"id": "b", "engine": "claude"}, "mcpServers": {}}, {}))
        jobs: list[Any] = []
        Dispatcher(face, session, jobs.append).feed(line)
        answer_in_flight(session, "the test ends")
        answer_in_flight(session, "the test ends")  # a second pass finds nothing owed
        for job in jobs:
            job.close()  # its answer would find the id gone, as a cancelled task does
        return events

    answered = [e for e in asyncio.run(run()) if isinstance(e, ErrorAnswer) and e.id == ident]
    assert len(answered) == 1, answered
