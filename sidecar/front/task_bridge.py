"""Between the two shapes of tasks, for the task methods (`sidecar.front.task_methods`):
a request in the engine's shape to the upstream that owns the task, in that upstream's
shape, and its answer back (`sidecar.wire.task_shapes` holds the shapes).

Owns: the request to the owning upstream (a 2026 server is told the client declares the
tasks extension; configured secrets are redacted from what comes back); the detailed task
a 2026 engine reads from either kind of server (a 2025-11-25 server's result fetched with
`tasks/result` and inlined once the task completed); the blocking result a 2025 engine
waits for from a 2026 server (its `tasks/get` polled at the pace the server asks, bounded
below and above, each question it inlines put to the engine on its session and answered
with `tasks/update`, at most `MAX_QUESTIONS`); and the charge of every task result: the
gate's result budget and one audit line, as a call's result takes them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from sidecar.errors import INTERNAL_ERROR, CallCancelled, SidecarError, UpstreamError
from sidecar.front.handling import Handling
from sidecar.gate import ToolCall
from sidecar.gate.answer import call_answer
from sidecar.gate.route import scrub_answer
from sidecar.hub.tasks import RELATED_TASK, TaskRecord
from sidecar.upstream import Upstream
from sidecar.upstream.handshake import MODERN_CLIENT_CAPABILITIES
from sidecar.wire import Request
from sidecar.wire.requests import Params
from sidecar.wire.task_shapes import TERMINAL, as_legacy, as_modern, extension_meta

__all__ = ["charged_result", "detailed_task", "legacy_task", "send", "upstream_task"]

MAX_QUESTIONS = 16  # questions one task may put to a 2025 engine through one tasks/result
POLL_FLOOR, POLL_CEILING = 0.02, 2.0  # seconds between polls of a 2026 server's task, whatever it asks


async def send(d: Handling, req: Request, record: TaskRecord, upstream: Upstream, method: str,
               params: dict[str, Any]) -> msgspec.Raw:
    """One request to the task's upstream, in its shape; its answer with secrets redacted."""
    if record.modern:
        params = {**params, "_meta": extension_meta(MODERN_CLIENT_CAPABILITIES)}
    meta = req.params.get("_meta")
    progress = d.progress_sink(req, Params(meta=meta if isinstance(meta, dict) else None))
    answer = await upstream.ready_connection().request(method, params, progress, d.mark_sent(req))
    scrub = d.face.gate.answers
    return scrub_answer(answer, scrub) if scrub else answer


async def upstream_task(d: Handling, req: Request, record: TaskRecord, upstream: Upstream) -> dict[str, Any]:
    """The task as its upstream describes it now (a 2026 server's with its inlined parts)."""
    task = msgspec.json.decode(await send(d, req, record, upstream, "tasks/get", {"taskId": record.upstream_id}))
    return task if isinstance(task, dict) else {}


async def legacy_task(d: Handling, req: Request, record: TaskRecord, upstream: Upstream) -> dict[str, Any]:
    """`tasks/get` for a 2025 engine: the task object, nothing inlined."""
    task = {**await upstream_task(d, req, record, upstream), "taskId": record.exposed_id}
    return as_legacy(task) if record.modern else task


async def detailed_task(d: Handling, req: Request, record: TaskRecord, upstream: Upstream) -> dict[str, Any]:
    """`tasks/get` for a 2026 engine: the detailed task, its result charged and recorded."""
    task = {**await upstream_task(d, req, record, upstream), "taskId": record.exposed_id}
    status = task.get("status")
    result: Any = None
    if status == "completed":
        fetch = _inlined(task) if record.modern else _fetched(d, req, record, upstream)
        result = msgspec.json.decode(await charge(d, record, fetch, via="tasks/get"))
    error = task.get("error") if record.modern else None
    if status == "failed" and not isinstance(error, dict):
        error = {"code": INTERNAL_ERROR, "message": task.get("statusMessage") or "the task failed"}
    asked = task.get("inputRequests") if record.modern else None
    if status == "input_required" and not isinstance(asked, dict):
        asked = {}  # a 2025-11-25 server asks on its own session: nothing a stateless engine can answer here
    return {**as_modern(task, result=result, error=error, inputRequests=asked), "resultType": "complete"}


def _inlined(task: dict[str, Any]) -> Callable[[], Awaitable[msgspec.Raw]]:
    async def fetch() -> msgspec.Raw:
        result = task.get("result")
        return msgspec.Raw(msgspec.json.encode(_without_related(result if isinstance(result, dict) else {})))

    return fetch


def _fetched(d: Handling, req: Request, record: TaskRecord, upstream: Upstream) -> Callable[[], Awaitable[msgspec.Raw]]:
    async def fetch() -> msgspec.Raw:
        raw = await send(d, req, record, upstream, "tasks/result", {"taskId": record.upstream_id})
        result = msgspec.json.decode(raw)
        return msgspec.Raw(msgspec.json.encode(_without_related(result if isinstance(result, dict) else {})))

    return fetch


def _without_related(result: dict[str, Any]) -> dict[str, Any]:
    """An inlined result names no related task (the task's id is beside it)."""
    meta = result.get("_meta")
    if not isinstance(meta, dict) or RELATED_TASK not in meta:
        return result
    rest = {k: v for k, v in meta.items() if k != RELATED_TASK}
    return {**{k: v for k, v in result.items() if k != "_meta"}, **({"_meta": rest} if rest else {})}


async def charged_result(d: Handling, req: Request, record: TaskRecord, upstream: Upstream) -> msgspec.Raw:
    """`tasks/result` for a 2025 engine: the call's result, once the task has one."""
    if record.modern:
        fetch = _awaited(d, req, record, upstream)
    else:
        async def fetch() -> msgspec.Raw:
            raw = await send(d, req, record, upstream, "tasks/result", {"taskId": record.upstream_id})
            return msgspec.Raw(msgspec.json.encode(d.face.tasks.outward_related(record.alias, msgspec.json.decode(raw))))
    return await charge(d, record, fetch)


def _awaited(d: Handling, req: Request, record: TaskRecord, upstream: Upstream) -> Callable[[], Awaitable[msgspec.Raw]]:
    """A 2026 server's task polled to its end; its questions put to the engine meanwhile."""
    async def fetch() -> msgspec.Raw:
        asked = 0
        while True:
            if req.id not in d.session.in_flight:  # the engine gave up on its tasks/result: stop polling
                raise CallCancelled("the engine cancelled its tasks/result")
            task = await upstream_task(d, req, record, upstream)
            status = task.get("status")
            if status in TERMINAL:
                return _ended(task, record.exposed_id)
            questions = task.get("inputRequests") if status == "input_required" else None
            if isinstance(questions, dict) and questions:
                asked += len(questions)
                if asked > MAX_QUESTIONS:
                    raise UpstreamError(f"the task asked more than {MAX_QUESTIONS} questions")
                await _answer(d, req, record, upstream, questions)
                continue
            await asyncio.sleep(_pace(task))

    return fetch


def _pace(task: dict[str, Any]) -> float:
    interval = task.get("pollIntervalMs")
    seconds = interval / 1000 if isinstance(interval, int | float) and not isinstance(interval, bool) else POLL_CEILING
    return min(max(seconds, POLL_FLOOR), POLL_CEILING)


def _ended(task: dict[str, Any], exposed_id: str) -> msgspec.Raw:
    status, result, error = task.get("status"), task.get("result"), task.get("error")
    if status == "completed" and isinstance(result, dict):
        meta = {**(result.get("_meta") or {}), RELATED_TASK: {"taskId": exposed_id}}
        return msgspec.Raw(msgspec.json.encode({**result, "_meta": meta}))
    if status == "failed" and isinstance(error, dict):
        code = error.get("code")
        raise UpstreamError(str(error.get("message") or "the task failed"),
                            code=code if type(code) is int else INTERNAL_ERROR)
    raise UpstreamError(f"the task ended {status} with no result")


async def _answer(d: Handling, req: Request, record: TaskRecord, upstream: Upstream,
                  questions: dict[str, Any]) -> None:
    """Each question to the engine on its session (as a 2025 server would ask it, naming
    the task), then every answer to the server in one `tasks/update`."""
    from sidecar.front.eras.asking import engine_asker
    from sidecar.gate.asked import InputRefused

    ask = engine_asker(d.session, d.face.config.policy.confirm_seconds)
    responses: dict[str, Any] = {}
    for key, question in questions.items():
        method = question.get("method") if isinstance(question, dict) else None
        params = question.get("params") if isinstance(question, dict) else None
        params = {**(params if isinstance(params, dict) else {}), "_meta": {RELATED_TASK: {"taskId": record.exposed_id}}}
        try:
            responses[key] = await ask(str(method), params)
        except InputRefused as exc:
            raise UpstreamError(f"the task's question could not be answered: {exc.words}") from None
    await send(d, req, record, upstream, "tasks/update", {"taskId": record.upstream_id, "inputResponses": responses})


async def charge(d: Handling, record: TaskRecord, fetch: Callable[[], Awaitable[msgspec.Raw]],
                 via: str = "tasks/result") -> msgspec.Raw:
    """A task's result through the result budget, recorded like the call that made the
    task: same audit fields, `via` the method that read it, the task's id as the engine
    holds it."""
    call = ToolCall(name=record.entry.exposed, arguments={}, session=d.session.held_scope, target=record.entry,
                    via=via)

    async def fetched(call: ToolCall) -> ToolCall:
        try:
            return call.complete(await fetch())
        except SidecarError as exc:
            return call.fail(exc)

    gate = d.face.gate
    try:
        await gate.charge(call, fetched)  # the result budget, as a call's own result takes it
    finally:
        if call.outcome is None:  # cancelled or broken on the way: ended once, as the chain ends a call
            call.fail(SidecarError("the task's result was not read"))
        if gate.recording:
            gate.recorder.record(call, task=record.exposed_id)
    return call_answer(call, d.redact)
