"""A plain `tools/call` with no task of its own (`sidecar.gate.inline`), in memory.

The promises the task way keeps, held to the started way: the request goes upstream
from the reader's callback with no task made; it ends once and is recorded once; an
engine's cancellation and a session's close both tell the upstream to stop and answer
nothing; pipelined calls go upstream in the order they were read; and every outcome
(a result, a secret in it, an upstream's error, a transport fault, a result over budget,
a server that is not ready) reaches the engine in the same bytes as by the task way (a
call with `_meta` takes that way).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from sidecar.errors import UpstreamUnavailable
from sidecar.gate import ToolCall
from tests.harness import FakeServer, ScriptedCall, in_memory, tool
from tests.harness.engine import FakeEngine
from tests.harness.upstream import WAIT

SECRET = "s3cr3t-Token-0123456789"
TOOLS = [tool("echo"), tool("big")]


def _tasks_of(engine: FakeEngine) -> list[asyncio.Future[Any]]:
    return [job for job in engine.jobs._running if isinstance(job, asyncio.Task) and not job.done()]


def _held_of(engine: FakeEngine) -> list[Any]:
    """Work under way with no task: handed to its owner, or found where it went (as stdio's)."""
    handed = [job for job in engine.jobs._running if not isinstance(job, asyncio.Task) and not job.done()]
    return [*handed, *engine.dispatcher.held()]


def _watch(face: Any) -> list[ToolCall]:
    seen: list[ToolCall] = []
    face.gate.observe(seen.append)
    return seen


async def _turns(n: int = 5) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


async def test_a_plain_call_makes_no_task_and_ends_once_recorded_once() -> None:
    server = FakeServer(TOOLS)
    async with in_memory({"f": server}) as sidecar:
        engine = await sidecar.engine()
        seen = _watch(sidecar.face)
        ident = engine.call("f__echo", {"text": "hi"})
        assert _tasks_of(engine) == [] and len(_held_of(engine)) == 1  # sent from the callback, no task
        call = await server.expect_call("echo")
        call.answer("hi back")
        answer = await engine.answer_to(ident)
        assert answer["result"]["content"][0]["text"] == "hi back"
        await _turns()
        assert [(c.name, c.outcome, c.charge) for c in seen] == [("f__echo", "completed", "pass")]
        assert engine.answers_to(ident) == [answer]


@pytest.mark.parametrize("meta", [{"note": 1}, {"io.modelcontextprotocol/protocolVersion": "2025-06-18"}])
async def test_a_session_engines_call_with_a_meta_takes_a_task_as_its_params_came(meta: dict[str, Any]) -> None:
    """Params that are a name, arguments and a `_meta` object are read as they came (no
    struct made), and from an engine of a session revision any `_meta` still takes a task;
    one read the typed way (a `task` member) goes there too."""
    server = FakeServer(TOOLS)
    async with in_memory({"f": server}) as sidecar:
        engine = await sidecar.engine()
        seen = _watch(sidecar.face)
        ident = engine.call("f__echo", {"text": "hi"}, meta=meta)
        await _turns()
        assert len(_tasks_of(engine)) == 1 and _held_of(engine) == []
        call = await server.expect_call("echo")
        call.answer("hi back")
        answer = await engine.answer_to(ident)
        assert answer["result"]["content"][0]["text"] == "hi back"
        plain = engine.call("f__echo", {"text": "again"})
        assert _held_of(engine) and len(_tasks_of(engine)) == 0
        (await server.expect_call("echo")).answer("again back")
        await engine.answer_to(plain)
        await _turns()
        assert [(c.outcome, c.charge) for c in seen] == [("completed", "pass")] * 2


async def test_a_session_finds_its_plain_calls_where_they_went_to_settle_and_close() -> None:
    server = FakeServer(TOOLS)
    async with in_memory({"f": server}) as sidecar:
        engine = await sidecar.engine()
        seen = _watch(sidecar.face)
        first, second = engine.call("f__echo", {"text": "a"}), engine.call("f__echo", {"text": "b"})
        handed = [job for job in engine.jobs._running if not isinstance(job, asyncio.Task)]
        assert handed == [] and len(engine.dispatcher.held()) == 2  # none handed over: found where they went
        assert engine.jobs.running() and len(engine.jobs) == 2
        answered, waiting = await server.expect_call("echo"), await server.expect_call("echo")
        answered.answer("a back")
        async with asyncio.timeout(WAIT):  # a bounded wait: it cancels nothing
            await engine.jobs.settle(0.2, asyncio.get_running_loop().create_future())
        assert (await engine.answer_to(first))["result"]["content"][0]["text"] == "a back"
        assert len(engine.dispatcher.held()) == 1
        async with asyncio.timeout(WAIT):
            await engine.jobs.aclose()  # the other ends at once: recorded cancelled, no answer
        assert [(c.outcome, str(c.error or "")) for c in seen] == [
            ("completed", ""), ("failed", "the call was cancelled before it ended")]
        assert not engine.jobs.running() and engine.dispatcher.held() == []
        assert await waiting.until_cancelled() == "the sidecar stopped waiting for this request"
        late = engine.call("f__echo", {"text": "c"})  # read after the close: no call starts, nothing held
        await _turns()
        assert engine.dispatcher.held() == [] and len(seen) == 2 and engine.answers_to(late) == []
        assert engine.answers_to(second) == []


async def test_a_call_with_meta_or_a_deadline_takes_the_task_way() -> None:
    server = FakeServer(TOOLS)
    async with in_memory({"f": server, "g": FakeServer(TOOLS)}, entries={"g": {"callDeadlineSeconds": 30}}) as sidecar:
        engine = await sidecar.engine()
        for name, meta in (("f__echo", {"note": 1}), ("g__echo", None)):
            ident = engine.call(name, {}, meta=meta)
            assert len(_tasks_of(engine)) == 1 and _held_of(engine) == []
            upstream = sidecar.upstream(name[0])
            (await upstream.expect_call()).answer("ok")
            assert (await engine.answer_to(ident))["result"]["content"][0]["text"] == "ok"
            await _turns()


async def test_the_table_of_plain_names_goes_with_the_catalog_it_was_read_from() -> None:
    from sidecar.catalog.layouts import full_layout
    from sidecar.catalog.merge import EMPTY_CATALOG

    server = FakeServer(TOOLS, on_call=_plain)
    async with in_memory({"f": server}) as sidecar:
        engine = await sidecar.engine()
        live = sidecar.face.gate.current.live
        await engine.call_and_wait("f__echo", {})
        assert list(live.plain) == ["f__echo"]  # a called name, kept: the next call's one look-up
        unknown = await engine.call_and_wait("f__nope", {})
        assert "error" in unknown and list(live.plain) == ["f__echo"]  # a name not listed is not kept
        catalog, listing = live.catalog, live.listing
        live.swap(EMPTY_CATALOG, full_layout(EMPTY_CATALOG))  # the tool is gone: so is its entry
        assert live.plain == {}
        plain = await engine.call_and_wait("f__echo", {})
        tasked = await engine.call_and_wait("f__echo", {}, meta={"note": "the task way"})
        assert _comparable(plain) == _comparable(tasked) and "fine" not in json.dumps(plain)
        live.swap(catalog, listing)
        assert "fine" in json.dumps(await engine.call_and_wait("f__echo", {})) and list(live.plain) == ["f__echo"]


async def test_an_engines_cancel_stops_the_upstream_and_answers_nothing() -> None:
    server = FakeServer(TOOLS)
    async with in_memory({"f": server}) as sidecar:
        engine = await sidecar.engine()
        seen = _watch(sidecar.face)
        ident = engine.call("f__echo", {"text": "slow"})
        call = await server.expect_call()
        engine.cancel(ident)
        assert await call.until_cancelled() == "cancelled by the client"
        call.answer("too late")
        marker = engine.request("ping")
        await engine.answer_to(marker)
        await _turns()
        assert engine.answers_to(ident) == []
        assert [(c.outcome, type(c.error).__name__) for c in seen] == [("failed", "CallCancelled")]


async def test_closing_the_session_stops_the_upstream_and_records_the_call_cancelled() -> None:
    server = FakeServer(TOOLS)
    async with in_memory({"f": server}) as sidecar:
        engine = await sidecar.engine()
        seen = _watch(sidecar.face)
        ident = engine.call("f__echo", {"text": "slow"})
        call = await server.expect_call()
        async with asyncio.timeout(WAIT):
            await engine.jobs.aclose()
        assert await call.until_cancelled() == "the sidecar stopped waiting for this request"
        assert engine.answers_to(ident) == []
        assert [(c.outcome, str(c.error)) for c in seen] == [("failed", "the call was cancelled before it ended")]
        assert engine.jobs.running() is False


async def test_pipelined_calls_go_upstream_in_the_order_read_and_each_ends_once() -> None:
    server = FakeServer(TOOLS)
    async with in_memory({"f": server}) as sidecar:
        engine = await sidecar.engine()
        seen = _watch(sidecar.face)
        lines = [json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                             "params": {"name": "f__echo", "arguments": {"n": n}}}) for n in range(40)]
        engine.dispatcher.feed(lines[0].encode())
        for line in lines[1:]:
            engine.dispatcher.feed(line.encode())
        calls = [await server.expect_call() for _ in range(40)]
        assert [c.arguments["n"] for c in calls] == list(range(40))
        for call in reversed(calls):
            call.answer(str(call.arguments["n"]))
        answers = [await engine.answer_to(n) for n in range(40)]
        assert [a["result"]["content"][0]["text"] for a in answers] == [str(n) for n in range(40)]
        await _turns()
        assert len(seen) == 40 and all(c.outcome == "completed" for c in seen)
        assert all(len(engine.answers_to(n)) == 1 for n in range(40))


def _with_secret(call: ScriptedCall) -> None:
    call.answer(f"the token is {SECRET}")


def _upstream_error(call: ScriptedCall) -> None:
    call.fail(-32010, f"refused with {SECRET}", {"why": SECRET})


def _fault(call: ScriptedCall) -> None:
    call.fault(UpstreamUnavailable("the body was over its cap"))


def _over_budget(call: ScriptedCall) -> None:
    call.answer(result={"content": [{"type": "text", "text": "x" * 5000}], "structuredContent": {
        "items": [{"n": n, "text": "y" * 40} for n in range(200)]}})


def _plain(call: ScriptedCall) -> None:
    call.answer("fine")


OUTCOMES: dict[str, Callable[[ScriptedCall], None]] = {
    "plain": _plain, "secret": _with_secret, "upstream error": _upstream_error, "fault": _fault,
    "over budget": _over_budget,
}


def _comparable(answer: dict[str, Any]) -> str:
    """The answer without its id, and a held handle's own letters (each holding has its own)."""
    return re.sub(r"h_[A-Za-z0-9_-]{16,}", "HANDLE", json.dumps({k: v for k, v in answer.items() if k != "id"}))


@pytest.mark.parametrize("outcome", sorted(OUTCOMES))
async def test_every_outcome_reaches_the_engine_in_the_same_bytes_either_way(outcome: str) -> None:
    server = FakeServer(TOOLS, on_call=OUTCOMES[outcome])
    async with in_memory({"f": server}, entries={"f": {"env": {"API_TOKEN": SECRET}}},
                         budgets={"resultChars": 2000}) as sidecar:
        engine = await sidecar.engine()
        seen = _watch(sidecar.face)
        plain = await engine.call_and_wait("f__echo", {"text": "a"})
        tasked = await engine.call_and_wait("f__echo", {"text": "a"}, meta={"note": "the task way"})
        assert _comparable(plain) == _comparable(tasked)
        assert SECRET not in json.dumps(plain)
        await _turns()
        first, second = seen
        assert (first.outcome, first.charge, type(first.error)) == (second.outcome, second.charge, type(second.error))


async def test_a_call_to_a_server_not_ready_is_refused_as_by_the_task_way() -> None:
    server = FakeServer(TOOLS)
    async with in_memory({"f": server}) as sidecar:
        engine = await sidecar.engine()
        server.die()
        await sidecar.state_of("f", "restarting", "failed", "crashed", "backoff", "down")
        plain = await engine.call_and_wait("f__echo", {})
        tasked = await engine.call_and_wait("f__echo", {}, meta={"note": 1})
        assert _comparable(plain) == _comparable(tasked)


class _Gate:
    """The gate's part a started call's end needs: no charge past the budget, records kept."""

    def __init__(self, recording: bool = False, budget: int = 1 << 20) -> None:
        self.closed: list[ToolCall] = []
        self.charge = self
        self.recording = recording
        # the smallest budget, where `ChargeResult` reads it (its current snapshot's facts)
        self.current = SimpleNamespace(live=SimpleNamespace(facts=SimpleNamespace(smallest_budget=budget)))

    def completed(self, call: ToolCall, size: int) -> None:
        return None

    def close(self, call: ToolCall) -> None:
        self.closed.append(call)


class _Conn:
    def __init__(self) -> None:
        self.cancelled: list[tuple[int, str]] = []

    def cancel(self, ident: int, reason: str = "") -> None:
        self.cancelled.append((ident, reason))


def _answering(started: Any) -> None:
    """As the front's answering: a cancelled call is recorded, and answered with nothing."""
    try:
        started.end()
    except asyncio.CancelledError:
        pass


def _started(gate: _Gate, conn: _Conn) -> Any:
    from sidecar.gate.inline import Started

    call = ToolCall(name="f__echo", arguments={})
    return Started(call, conn, {"name": "echo", "arguments": {}}, None, gate, ident=7)  # type: ignore[arg-type]


async def test_a_started_call_ends_once_from_its_connection_with_no_future() -> None:
    from sidecar.wire import UpstreamFrame

    gate, conn = _Gate(), _Conn()
    started = _started(gate, conn)
    answered: list[Any] = []
    started.arm(lambda s: answered.append(s.end()))
    started.set_result(UpstreamFrame(id=7, result=b'{"content":[]}'))  # type: ignore[arg-type]
    assert started.done() and answered == [None] and [c.outcome for c in gate.closed] == ["completed"]
    started.set_exception(UpstreamUnavailable("late"))  # a second ending is ignored
    assert started.cancel() is False and len(answered) == 1 and len(gate.closed) == 1


async def test_a_passing_answer_is_handed_out_before_the_call_ends_once() -> None:
    from sidecar.errors import UpstreamUnavailable as Fault
    from sidecar.wire import UpstreamFrame

    def ended_with(gate: _Gate, frame: Any) -> Any:
        started = _started(gate, _Conn())
        started.set_result(frame)
        return started

    plain = UpstreamFrame(id=7, result=b'{"content":[]}')  # type: ignore[arg-type]
    gate = _Gate()
    started = ended_with(gate, plain)
    assert started.passing() == b'{"content":[]}' and gate.closed == []  # not ended yet: the answer goes first
    started.passed(started.passing())
    assert [(c.outcome, c.charge, c.bytes_in, c.result) for c in gate.closed] == [
        ("completed", "pass", 14, b'{"content":[]}')]
    assert bytes(ended_with(_Gate(), UpstreamFrame(id=7)).passing() or b"") == b"{}"  # type: ignore[arg-type]
    # Whatever `end` must decide or a watcher reads first keeps the old order: None, nothing ended.
    for gate, frame in ((_Gate(recording=True), plain), (_Gate(budget=4), plain),
                        (_Gate(), UpstreamFrame(id=7, error=b'{"code":1,"message":"no"}')),  # type: ignore[arg-type]
                        (_Gate(), UpstreamFrame(id=7, result=b'{"resultType":"input_required"}'))):  # type: ignore[arg-type]
        started = ended_with(gate, frame)
        assert started.passing() is None and gate.closed == []
    faulted = _started(_Gate(), _Conn())
    faulted.set_exception(Fault("gone"))
    assert faulted.passing() is None


async def test_a_call_that_ended_before_it_was_armed_is_answered_in_the_next_turn_once() -> None:
    gate, conn = _Gate(), _Conn()
    started = _started(gate, conn)
    started.set_exception(UpstreamUnavailable("the pipe broke while sending"))  # as a transport faulting in `send`
    answered: list[Any] = []
    started.arm(lambda s: answered.append(s.end()))
    assert answered == []  # never inside the starter: its caller still registers the call
    await _turns(2)
    assert answered == [None] and [(c.outcome, type(c.error).__name__) for c in gate.closed] == [
        ("failed", "UpstreamUnavailable")]


async def test_a_held_call_is_settled_and_cancelled_as_a_future_is() -> None:
    from sidecar.concurrency import Jobs
    from sidecar.wire import UpstreamFrame

    jobs, gate, conn = Jobs(), _Gate(), _Conn()
    first, second = _started(gate, conn), _started(gate, conn)
    for started in (first, second):
        started.arm(_answering)
        jobs.hold(started)
    assert jobs.running() and len(jobs) == 2
    asyncio.get_running_loop().call_later(0.01, first.set_result, UpstreamFrame(id=7, result=b"{}"))  # type: ignore[arg-type]
    async with asyncio.timeout(WAIT):
        await jobs.settle(0.2, asyncio.get_running_loop().create_future())  # a bounded wait: it cancels nothing
    assert first.done() and not second.done()
    async with asyncio.timeout(WAIT):
        await jobs.aclose()  # the other ends at once: the upstream told to stop, recorded cancelled
    assert conn.cancelled == [(7, "the sidecar stopped waiting for this request")]
    assert [(c.outcome, str(c.error) if c.error else "") for c in gate.closed] == [
        ("completed", ""), ("failed", "the call was cancelled before it ended")]
    assert not jobs.running()
    late = _started(gate, conn)
    late.arm(lambda s: None)
    jobs.hold(late)  # closed: cancelled at once
    assert late.done()
