"""The engine-facing task methods, each routed to the upstream that owns the task: the
2025-11-25 ones (`tasks/get`, `tasks/result`, `tasks/cancel`, `tasks/list`) and those of
the 2026 tasks extension (`tasks/get`, `tasks/update`, `tasks/cancel`), whichever shape
the owning upstream speaks (`sidecar.front.task_bridge` crosses between the two).

Owns the checks every task request passes: the task is this session's (the face's
`TaskTable`), the bot may still call the tool that made it (the gate's grant), its upstream
is mounted. Refuses everything else with one "unknown task" answer, so a model cannot
probe for other sessions' tasks. A request is of the 2026 extension when its `_meta`
declares it; at 2026-07-28 the task methods are the extension's only, and one that does
not declare it is refused as the extension says (-32021), as is `tasks/update` from a
2025 engine; `tasks/result` and `tasks/list`, which the extension removed, are refused to
a request that declares it. A task's result (`tasks/result`, or a completed task that `tasks/get`
inlines) goes through the gate's result budget and writes an audit line like a call's.
`tasks/list` is the session's own tasks only, gathered from the upstreams that own them.
"""

from __future__ import annotations

from typing import Any

import msgspec

from sidecar.errors import INVALID_PARAMS, METHOD_NOT_FOUND, EngineInputError
from sidecar.front import task_bridge as bridge
from sidecar.front.handling import Handler, Handling, Result
from sidecar.hub.tasks import TaskRecord
from sidecar.upstream import Upstream
from sidecar.wire import Request
from sidecar.wire.requests import PageParams, TaskParams, UpdateParams
from sidecar.wire.task_shapes import MISSING_CAPABILITY, TASKS_EXTENSION, as_legacy, declares_tasks
from sidecar.wire.versions import MODERN_VERSION

__all__ = ["TASK_METHODS"]

LIST_PAGES = 16  # pages read from one upstream's tasks/list for one engine request


def _owned(d: Handling, params: TaskParams) -> tuple[TaskRecord, Upstream]:
    record = d.face.tasks.find(d.session.held_scope, params.taskId)
    upstream = d.face.pool.get(record.alias)
    if upstream is None or not d.face.gate.grant.allows(record.alias, record.entry.name):
        raise EngineInputError(f"unknown task {record.exposed_id!r} at params.taskId", code=INVALID_PARAMS)
    return record, upstream


def _modern(d: Handling, req: Request) -> bool:
    """A request in the extension's shape (it declares the extension). At 2026-07-28 the
    task methods are the extension's alone: one that does not declare it is refused."""
    if declares_tasks(req.params.get("_meta")):
        return True
    if d.session.protocol_version == MODERN_VERSION:
        raise _undeclared(req.method)
    return False


def _undeclared(method: str) -> EngineInputError:
    """The extension's refusal of a task method from a request that did not declare it, naming
    the capability it needs in `data`, as the revision's error shape asks."""
    return EngineInputError(f"{method} is a method of the {TASKS_EXTENSION} extension: declare it in "
                            "params._meta's client capabilities", code=MISSING_CAPABILITY,
                            data={"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}})


async def tasks_get(d: Handling, req: Request, params: TaskParams) -> Result:
    modern = _modern(d, req)
    record, upstream = _owned(d, params)
    if modern:
        return await bridge.detailed_task(d, req, record, upstream)
    task: dict[str, Any] = d.face.tasks.outward_related(record.alias, await bridge.legacy_task(d, req, record, upstream))
    return task


async def tasks_cancel(d: Handling, req: Request, params: TaskParams) -> Result:
    modern = _modern(d, req)
    record, upstream = _owned(d, params)
    answer = await bridge.send(d, req, record, upstream, "tasks/cancel", {"taskId": record.upstream_id})
    if modern:
        return {"resultType": "complete"}  # the extension's empty acknowledgement, whoever owns the task
    if record.modern:  # a 2025 engine wants the cancelled task back
        return as_legacy({**await bridge.upstream_task(d, req, record, upstream), "taskId": record.exposed_id})
    cancelled = msgspec.json.decode(answer)
    if not isinstance(cancelled, dict):
        return {}
    shaped: dict[str, Any] = d.face.tasks.outward_related(record.alias, {**cancelled, "taskId": record.exposed_id})
    return shaped


async def tasks_update(d: Handling, req: Request, params: UpdateParams) -> Result:
    if not _modern(d, req):
        raise _undeclared("tasks/update")
    record, upstream = _owned(d, params)
    if not record.modern:
        raise EngineInputError(f"task {record.exposed_id!r} belongs to a server of the 2025-11-25 revision, "
                               "which asks its questions itself: nothing to update", code=INVALID_PARAMS)
    responses = params.inputResponses
    if not isinstance(responses, dict):
        raise EngineInputError("params.inputResponses must be an object", code=INVALID_PARAMS)
    update = {"taskId": record.upstream_id, "inputResponses": responses}
    await bridge.send(d, req, record, upstream, "tasks/update", update)
    return {"resultType": "complete"}


async def tasks_result(d: Handling, req: Request, params: TaskParams) -> Result:
    _legacy_only(d, req)
    record, upstream = _owned(d, params)
    return await bridge.charged_result(d, req, record, upstream)


def _legacy_only(d: Handling, req: Request) -> None:
    """`tasks/result` and `tasks/list` are 2025-11-25's; the extension removed them."""
    if _modern(d, req):
        raise EngineInputError(f"{req.method} is not a method of the {TASKS_EXTENSION} extension "
                               "(tasks/get inlines the result)", code=METHOD_NOT_FOUND)


async def tasks_list(d: Handling, req: Request, params: PageParams) -> Result:
    _legacy_only(d, req)
    mine = d.face.tasks.of(d.session.held_scope)
    tasks: list[dict[str, Any]] = []
    for alias in dict.fromkeys(r.alias for r in mine):
        upstream = d.face.pool.get(alias)
        if upstream is None:
            continue
        if any(r.modern for r in mine if r.alias == alias):  # the extension has no list: each task asked
            tasks += [as_legacy({**await bridge.upstream_task(d, req, r, upstream), "taskId": r.exposed_id})
                      for r in mine if r.alias == alias]
            continue
        if "tasks" not in (upstream.capabilities or {}):
            continue
        for task in await _upstream_tasks(d, req, params, upstream):
            record = d.face.tasks.by_upstream(alias, task.get("taskId")) if isinstance(task, dict) else None
            if record is not None and record.owner == d.session.held_scope:  # this session's, no other's
                tasks.append({**task, "taskId": record.exposed_id})
    return {"tasks": tasks}


async def _upstream_tasks(d: Handling, req: Request, params: PageParams, upstream: Upstream) -> list[Any]:
    found: list[Any] = []
    cursor: object = None
    for _ in range(LIST_PAGES):
        page = msgspec.json.decode(await d.forward(req, params, upstream, {"cursor": cursor} if cursor else {}))
        if not isinstance(page, dict):
            break
        found += page.get("tasks") or []
        cursor = page.get("nextCursor")
        if not isinstance(cursor, str):
            break
    return found


TASK_METHODS: dict[str, Handler] = {
    "tasks/get": tasks_get,
    "tasks/cancel": tasks_cancel,
    "tasks/result": tasks_result,
    "tasks/list": tasks_list,
    "tasks/update": tasks_update,
}
