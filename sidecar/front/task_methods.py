"""The engine-facing task methods (MCP 2025-11-25): `tasks/get`, `tasks/result`,
`tasks/cancel` and `tasks/list`, each routed to the upstream that owns the task.

Owns the checks every task request passes: the task is this session's (the face's
`TaskTable`), the bot may still call the tool that made it (the gate's grant), its upstream
is mounted. Refuses everything else with one "unknown task" answer, so a model cannot
probe for other sessions' tasks. `tasks/result` carries the call's result, so it goes
through the gate's result budget like any call's result. `tasks/list` is the session's
own tasks only, gathered from the upstreams that own them, in one page.
"""

from __future__ import annotations

from typing import Any

import msgspec

from sidecar.errors import INVALID_PARAMS, EngineInputError, SidecarError
from sidecar.front.handling import Handling, Result
from sidecar.gate import ToolCall
from sidecar.gate.answer import call_answer
from sidecar.hub.tasks import TaskRecord
from sidecar.upstream import Upstream
from sidecar.wire import Request

__all__ = ["TASK_METHODS"]

LIST_PAGES = 16  # pages read from one upstream's tasks/list for one engine request


def _owned(d: Handling, req: Request) -> tuple[TaskRecord, Upstream]:
    record = d.face.tasks.find(d.session.held_scope, req.params.get("taskId"))
    upstream = d.face.pool.get(record.alias)
    if upstream is None or not d.face.gate.grant.allows(record.alias, record.entry.name):
        raise EngineInputError(f"unknown task {record.exposed_id!r} at params.taskId", code=INVALID_PARAMS)
    return record, upstream


async def _task_answer(d: Handling, req: Request) -> Result:
    """`tasks/get` and `tasks/cancel`: the upstream's task object, under the engine's id."""
    record, upstream = _owned(d, req)
    answer = msgspec.json.decode(await d.forward(req, upstream, {**req.params, "taskId": record.upstream_id}))
    if isinstance(answer, dict):
        answer = d.face.tasks.outward_related(record.alias, {**answer, "taskId": record.exposed_id})
    return answer if isinstance(answer, dict) else {}


async def tasks_result(d: Handling, req: Request) -> Result:
    """The task's result, charged like a call's result and recorded like one: an audit
    line with the same fields as the call that made the task, `via` this method, and the
    task's id as the engine holds it."""
    record, upstream = _owned(d, req)
    call = ToolCall(name=record.entry.exposed, arguments={}, session=d.session.held_scope, target=record.entry,
                    via="tasks/result")

    async def fetch(call: ToolCall) -> ToolCall:
        try:
            raw = await d.forward(req, upstream, {**req.params, "taskId": record.upstream_id})
        except SidecarError as exc:
            return call.fail(exc)
        result = d.face.tasks.outward_related(record.alias, msgspec.json.decode(raw))
        return call.complete(msgspec.Raw(msgspec.json.encode(result)))

    gate = d.face.gate
    try:
        await gate.charge(call, fetch)  # the result budget, as a call's own result takes it
    finally:
        if call.outcome is None:  # cancelled or broken on the way: ended once, as the chain ends a call
            call.fail(SidecarError("tasks/result ended without a result"))
        if gate.recording:
            gate.recorder.record(call, task=record.exposed_id)
    return call_answer(call, d.redact)


async def tasks_list(d: Handling, req: Request) -> Result:
    mine = d.face.tasks.of(d.session.held_scope)
    tasks: list[dict[str, Any]] = []
    for alias in dict.fromkeys(r.alias for r in mine):
        upstream = d.face.pool.get(alias)
        if upstream is None or "tasks" not in (upstream.capabilities or {}):
            continue
        for task in await _upstream_tasks(d, req, upstream):
            record = d.face.tasks.by_upstream(alias, task.get("taskId")) if isinstance(task, dict) else None
            if record is not None and record.owner == d.session.held_scope:  # this session's, no other's
                tasks.append({**task, "taskId": record.exposed_id})
    return {"tasks": tasks}


async def _upstream_tasks(d: Handling, req: Request, upstream: Upstream) -> list[Any]:
    found: list[Any] = []
    cursor: object = None
    for _ in range(LIST_PAGES):
        page = msgspec.json.decode(await d.forward(req, upstream, {"cursor": cursor} if cursor else {}))
        if not isinstance(page, dict):
            break
        found += page.get("tasks") or []
        cursor = page.get("nextCursor")
        if not isinstance(cursor, str):
            break
    return found


TASK_METHODS = {
    "tasks/get": _task_answer,
    "tasks/cancel": _task_answer,
    "tasks/result": tasks_result,
    "tasks/list": tasks_list,
}
