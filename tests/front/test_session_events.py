"""The typed seam between an engine session and its front, in memory: the session and the
dispatcher emit events, stdio encodes each as one line, an HTTP session routes each by its
kind, id and progress token (decoding nothing), and a stateless answer gets its fields
spliced into the upstream's result bytes with the meaning a full re-encoding had."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import msgspec
from hypothesis import given, strategies as st

from sidecar.config import parse_config
from sidecar.front.dispatcher import Dispatcher
from sidecar.front.http.caching import cache_fields
from sidecar.front.http.sessions import HttpSession
from sidecar.front.http.stateless import stamp_answer
from sidecar.front.stdio import EngineStdout
from sidecar.hub import build_face
from sidecar.hub.face import Face
from sidecar.hub.session import EngineSession
from sidecar.redact import Redactor
from sidecar.wire import Answer, ErrorAnswer, Event, Notice, Relayed, encode_event
from sidecar.wire.outbox import FrameQueue


def _face() -> Face:
    return build_face(parse_config({"bot": {"id": "b", "engine": "claude"}, "mcpServers": {}}, {}))


def _drain(queue: FrameQueue) -> list[Any]:
    out = []
    while len(queue):
        frame = queue.get_nowait()
        out.append(msgspec.json.decode(frame) if frame else frame)
    return out


def test_the_dispatcher_emits_typed_answers_and_a_bytes_sink_gets_their_lines() -> None:
    async def run() -> None:
        events: list[Event] = []
        lines: list[bytes] = []
        for session in (EngineSession(emit=events.append), EngineSession(lines.append)):
            dispatcher = Dispatcher(_face(), session, lambda job: None)
            dispatcher.feed(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
            dispatcher.feed(b'{"jsonrpc":"2.0","id":2,"method":"no/such"}')
            dispatcher.feed(b'{"jsonrpc":"2.0","id":3,"id":4,"method":"ping"}')
        assert events == [Answer(1, b"{}"), ErrorAnswer(2, -32601, "method not found: no/such"),
                          ErrorAnswer(None, -32700, "parse error: duplicate key in object")]
        assert lines == [encode_event(e) for e in events]
        assert [json.loads(line)["id"] for line in lines] == [1, 2, None]

    asyncio.run(run())


def test_stdout_writes_each_event_as_one_json_line() -> None:
    written: list[bytes] = []
    stdout = EngineStdout(written.append, lambda: 0)
    stdout.emit(Notice("notifications/progress", {"progressToken": "t", "progress": 1}))
    stdout.emit(Relayed(5, "roots/list"))
    assert [json.loads(f) for f in written] == [
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "t", "progress": 1}},
        {"jsonrpc": "2.0", "id": 5, "method": "roots/list"}]
    assert all(f.endswith(b"\n") and f.count(b"\n") == 1 for f in written)


def test_an_http_session_routes_events_by_kind_id_and_token() -> None:
    async def run() -> None:
        session = HttpSession(_face(), Redactor(), "s")
        assert session.open_stream() is session.stream
        older = session.begin(["a"], ["tok-a"])
        newer = session.begin(["b"], [None])
        older.streaming = newer.streaming = True
        session.deliver(Notice("notifications/progress", {"progressToken": "tok-a", "progress": 1}))
        session.deliver(Notice("notifications/progress", {"progressToken": "unknown", "progress": 2}))
        session.deliver(Notice("notifications/message", {"level": "info", "data": "m"}))
        session.deliver(Relayed(1, "sampling/createMessage", msgspec.Raw(b'{"messages":[]}')))
        session.deliver(Notice("notifications/tools/list_changed"))
        session.deliver(ErrorAnswer(None, -32700, "parse error: not valid JSON"))
        session.deliver(ErrorAnswer("b", -32602, "bad"))
        session.deliver(Answer("a", msgspec.Raw(b'{"content":[]}')))
        session.deliver(Answer("late", {}))  # nobody waits: the GET stream
        assert [f and (f.get("id"), f.get("method")) for f in _drain(older.frames)] == [
            (None, "notifications/progress"), ("a", None), None]
        assert [f and (f.get("id"), f.get("method")) for f in _drain(newer.frames)] == [
            (None, "notifications/progress"), (None, "notifications/message"), (1, "sampling/createMessage"),
            ("b", None), None]
        assert newer.error_code == -32602 and older.error_code is None
        assert [(f.get("id"), f.get("method")) for f in _drain(session.stream)] == [
            (None, "notifications/tools/list_changed"), (None, None), ("late", None)]
        await session.close()

    asyncio.run(run())


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=12,
)
stamp_keys = st.sampled_from(["resultType", "ttlMs", "cacheScope", "other"])


def _reencoded(method: str, result: dict[str, Any]) -> dict[str, Any]:
    """What the stamp meant when it decoded the whole answer: setdefault, then encode; a
    cacheable result's hints made safe (always private, a bounded ttl: issue 24)."""
    stamped = dict(result)
    stamped.setdefault("resultType", "complete")
    if method in ("tools/list", "resources/read"):
        stamped.update(cache_fields(method, result.get("ttlMs")))
    return stamped


@given(st.dictionaries(stamp_keys | st.text(max_size=6), json_values, max_size=5),
       st.sampled_from(["tools/call", "tools/list", "resources/read"]), st.sampled_from([0, 2, None]),
       st.booleans())
def test_a_spliced_stamp_means_what_a_reencoded_one_did(result: dict[str, Any], method: str,
                                                        indent: int | None, as_dict: bool) -> None:
    raw = json.dumps(result, indent=indent, ensure_ascii=indent == 2).encode()
    answer = Answer(7, result if as_dict else msgspec.Raw(raw))
    frame = stamp_answer(method, answer)
    assert frame.endswith(b"\n")
    assert json.loads(frame, object_pairs_hook=_unique) == {"jsonrpc": "2.0", "id": 7, "result": _reencoded(method, result)}


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    assert len({k for k, _ in pairs}) == len(pairs), f"a key spliced in twice: {pairs}"
    return dict(pairs)


def test_a_progress_token_that_is_not_an_id_routes_like_no_token() -> None:
    async def run() -> None:
        session = HttpSession(_face(), Redactor(), "s")
        owner = session.begin(["a"], [1])
        newest = session.begin(["b"], [None])
        owner.streaming = newest.streaming = True
        for token in (["x"], {"k": 1}, True, 1.0):  # unhashable, or equal to 1 without being it
            session.deliver(Notice("notifications/progress", {"progressToken": token}))
        session.deliver(Notice("notifications/progress", {"progressToken": 1}))
        assert [f["params"]["progressToken"] for f in _drain(owner.frames)] == [1]
        assert [f["params"]["progressToken"] for f in _drain(newest.frames)] == [["x"], {"k": 1}, True, 1.0]
        await session.close()

    asyncio.run(run())
