"""The bound on every sink toward an engine, in memory, over many flood shapes (issue 12,
class 3): what a sink holds stays bounded whatever arrives, chatter goes first, answers
never go, and an HTTP session routes each frame to a bounded stream.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.config import parse_config
from sidecar.front.http.sessions import HttpSession
from sidecar.hub import build_face
from sidecar.redact import Redactor
from sidecar.wire import Answer, Notice, encode_notification, encode_result
from sidecar.wire.outbox import (
    CHATTER,
    HARD_BYTES,
    IDLE_HARD_BYTES,
    SOFT_BYTES,
    FrameQueue,
    Shedding,
    queued_total,
)

SOFT, HARD = 4_000, 16_000  # small marks, so a short example reaches them

methods = st.sampled_from(["notifications/progress", "notifications/message", "notifications/resources/updated",
                           "notifications/tools/list_changed", None])  # None: a relayed request
steps = st.lists(
    st.one_of(
        st.tuples(st.just("offer"), methods, st.integers(1, 6_000)),
        st.tuples(st.just("answer"), st.none(), st.integers(1, 6_000)),
        st.tuples(st.just("take"), st.none(), st.integers(1, 50)),
    ),
    max_size=400,
)


@settings(max_examples=300, deadline=None)
@given(steps)
def test_a_sink_holds_a_bounded_amount_of_notifications_and_every_answer(plan: list[tuple[str, Any, int]]) -> None:
    queue = FrameQueue(Shedding("a test sink", SOFT, HARD))
    answers_in, answers_out, refused = 0, 0, 0
    try:
        for step, method, size in plan:
            if step == "answer":
                queue.put(b"A" * size)
                answers_in += 1
            elif step == "offer":
                held = queue.bytes
                accepted = queue.offer(b"N" * size, method)
                limit = SOFT if method in CHATTER else HARD
                assert accepted == (held < limit), (method, held)
                refused += not accepted
                if not accepted and method not in CHATTER:  # chatter would have gone first
                    assert not queue.shedding.fits("notifications/progress", queue.bytes)
            else:
                for _ in range(min(size, len(queue))):
                    frame = queue.get_nowait()
                    assert frame is not None
                    answers_out += frame[:1] == b"A"
        while len(queue):
            frame = queue.get_nowait()
            assert frame is not None
            answers_out += frame[:1] == b"A"
        assert answers_out == answers_in, "an answer was lost"
        assert sum(queue.shedding.dropped.values()) == refused
    finally:
        queue.discard()
    assert queued_total() == 0


@settings(max_examples=200, deadline=None)
@given(steps)
def test_notifications_alone_never_take_more_than_the_hard_mark_and_one_frame(plan: list[tuple[str, Any, int]]) -> None:
    queue = FrameQueue(Shedding("a test sink", SOFT, HARD))
    try:
        for step, method, size in plan:
            if step == "offer":
                queue.offer(b"N" * size, method)
            elif step == "take":
                for _ in range(min(size, len(queue))):
                    queue.get_nowait()
            assert queue.bytes < HARD + 6_000
    finally:
        queue.discard()


def _session() -> HttpSession:
    config = parse_config({"bot": {"id": "b", "engine": "claude"}, "mcpServers": {}}, {})
    return HttpSession(build_face(config), Redactor(), "s")


frames = st.lists(
    st.tuples(st.sampled_from(["progress", "message", "updated", "changed", "answer"]), st.integers(1, 200_000)),
    max_size=120,
)


@settings(max_examples=60, deadline=None)
@given(frames, st.booleans(), st.booleans())
def test_an_http_session_that_is_not_read_stays_bounded_and_keeps_its_answers(
    plan: list[tuple[str, int]], stream_open: bool, streaming_post: bool,
) -> None:
    async def run() -> None:
        session = _session()
        if stream_open:
            assert session.open_stream() is session.stream
        ids = [f"r{n}" for n, (kind, _) in enumerate(plan) if kind == "answer"]
        exchange = session.begin(ids, ["tok"])
        exchange.streaming = streaming_post
        for n, (kind, size) in enumerate(plan):
            pad = "x" * size
            if kind == "answer":
                session.deliver(Answer(f"r{n}", {"pad": pad}))
            elif kind == "progress":
                session.deliver(Notice("notifications/progress", {"progressToken": "tok", "message": pad}))
            elif kind == "message":
                session.deliver(Notice("notifications/message", {"level": "info", "data": pad}))
            elif kind == "updated":
                session.deliver(Notice("notifications/resources/updated", {"uri": pad}))
            else:
                session.deliver(Notice("notifications/tools/list_changed", {"pad": pad}))
        answers = sum(len(f) for f in _drain(exchange.frames) if f and b'"result"' in f)
        owed = sum(len(encode_result(i, {"pad": "x" * s})) for i, (k, s) in zip(ids, [p for p in plan if p[0] == "answer"]))
        assert answers == owed, "every answer reaches its POST"
        hard = HARD_BYTES if stream_open else IDLE_HARD_BYTES
        assert session.stream.bytes < hard + 210_000
        await session.close()
        exchange.frames.discard()
        session.stream.discard()

    asyncio.run(run())
    assert queued_total() == 0


def _drain(queue: FrameQueue) -> list[bytes | None]:
    out = []
    while len(queue):
        out.append(queue.get_nowait())
    return out


def test_a_relayed_request_is_refused_to_the_upstream_when_the_sink_is_full() -> None:
    async def run() -> None:
        session = _session()
        session.stream.put(b"x" * (IDLE_HARD_BYTES + 1))  # a GET stream nobody opened, full
        refused: list[tuple[Any, int, str]] = []

        class Upstream:
            def respond_error(self, ident: Any, code: int, message: str) -> None:
                refused.append((ident, code, message))

        session.engine.relay_request(Upstream(), 7, "sampling/createMessage", msgspec.Raw(b"{}"))  # type: ignore[arg-type]
        assert refused and refused[0][0] == 7 and "not reading" in refused[0][2]
        assert len(session.stream) == 1
        session.stream.discard()
        await session.close()

    asyncio.run(run())


def test_the_marks_are_ordered() -> None:
    assert IDLE_HARD_BYTES < SOFT_BYTES < HARD_BYTES


def test_a_listen_stream_that_is_not_read_keeps_one_change_of_each_kind() -> None:
    from sidecar.front.http.stateless import Listen

    async def run() -> None:
        face = _session().face
        listen = Listen(face, "sub", {"toolsListChanged": True, "promptsListChanged": True})
        listen.open()
        for _ in range(50_000):
            for session in face.sessions:
                session.notify("notifications/tools/list_changed")
                session.notify("notifications/prompts/list_changed")
                session.notify("notifications/message", {"data": "x" * 100})  # not asked for: never queued
        assert len(listen.frames) == 3  # the acknowledgement, then one change of each kind
        listen.written(listen.frames.get_nowait() or b"")
        change = listen.frames.get_nowait()
        assert change is not None
        listen.written(change)
        face.sessions[0].notify("notifications/tools/list_changed")  # news again once written
        assert len(listen.frames) == 2
        listen.close()
        listen.frames.discard()

    asyncio.run(run())
    assert queued_total() == 0


def test_a_list_change_dropped_on_stdout_is_said_once_stdout_drains() -> None:
    from sidecar.front.stdio import EngineStdout, _StdoutFlow

    written: list[bytes] = []
    held = [HARD_BYTES + 1]
    flow = _StdoutFlow()
    stdout = EngineStdout(written.append, lambda: held[0], flow)
    flow.pause_writing()
    for _ in range(1000):
        assert not stdout.admits("notifications/tools/list_changed")
        assert not stdout.admits("notifications/resources/updated")
    assert not stdout.admits("notifications/progress")
    assert written == []
    held[0] = 0
    flow.resume_writing()
    assert [msgspec.json.decode(f)["method"] for f in written] == ["notifications/tools/list_changed"]
    assert stdout.admits("notifications/progress")
    flow.resume_writing()
    assert len(written) == 1  # said once


def test_a_list_change_shed_from_a_full_stream_arrives_once_it_drains() -> None:
    queue = FrameQueue(Shedding("a test sink", SOFT, HARD))
    try:
        queue.put(b"A" * HARD)  # an answer fills it
        for _ in range(100):
            assert not queue.offer(encode_notification("notifications/tools/list_changed"), "notifications/tools/list_changed")
        assert not queue.offer(encode_notification("notifications/message", {}), "notifications/message")
        taken = [queue.get_nowait()]
        while len(queue):
            taken.append(queue.get_nowait())
        assert taken[0] == b"A" * HARD
        assert [msgspec.json.decode(f or b"null")["method"] for f in taken[1:]] == ["notifications/tools/list_changed"]
    finally:
        queue.discard()


def test_a_queue_dropped_without_being_discarded_gives_its_bytes_back() -> None:
    before = queued_total()
    queue = FrameQueue(Shedding("a forgotten sink", SOFT, HARD))
    queue.put(b"A" * 3_000)
    assert queue.offer(b"N" * 500, "notifications/message")
    assert queued_total() == before + 3_500
    del queue  # a stream that ended on a path that never called discard
    assert queued_total() == before
