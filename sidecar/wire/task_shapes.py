"""The two shapes of MCP tasks, and the way between them. No I/O.

2025-11-25 tasks ("legacy"): a `tools/call` asks with `params.task`, the answer wraps the
task as `{"task": {...}}`, the fields are `ttl` and `pollInterval`; `tasks/get` answers a
task object, `tasks/result` blocks until the result, `tasks/list` pages the tasks, a
status comes as `notifications/tasks/status`; a task's questions are requests the server
sends on its session.

The 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663, "modern"): the
client declares the extension in its request's client capabilities and the server
decides; the answer is the task itself, flat, with `resultType: "task"`; the fields are
`ttlMs` and `pollIntervalMs`; `tasks/get` answers the detailed task, its result, error or
questions (`inputRequests`) inlined; `tasks/update` carries the answers; `tasks/cancel`
answers an empty acknowledgement; `tasks/result` and `tasks/list` are gone; a status comes
as `notifications/tasks`.
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` waits for the runtime: the early answers read this module
if TYPE_CHECKING:
    from typing import Any

__all__ = ["CLIENT_CAPABILITIES", "LEGACY_TASK_STATUS", "MISSING_CAPABILITY", "TASKS_EXTENSION", "TASK_STATUS",
           "TERMINAL", "CreatedTask",
           "as_legacy", "as_modern", "created_task", "declares_tasks", "extension_meta", "offers_extension"]

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
MISSING_CAPABILITY = -32021  # a request needing a capability its sender did not declare (2026-07-28)
TERMINAL = frozenset({"completed", "failed", "cancelled"})
TASK_STATUS = "notifications/tasks"  # the extension's status notification
LEGACY_TASK_STATUS = "notifications/tasks/status"  # 2025-11-25's
_BASE = ("taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt")
_RENAMED = (("ttl", "ttlMs"), ("pollInterval", "pollIntervalMs"))  # legacy name, modern name


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def declares_tasks(meta: Any) -> bool:
    """A request `_meta` whose client capabilities declare the tasks extension."""
    if not meta or not isinstance(meta, dict):  # no _meta, as on most calls: asked twice per call, so kept cheap
        return False
    capabilities = meta.get(CLIENT_CAPABILITIES)
    if not capabilities:  # a stateless call's envelope most often declares none
        return False
    return TASKS_EXTENSION in _object(_object(capabilities).get("extensions"))


def offers_extension(capabilities: Any) -> bool:
    """A server's capabilities that offer the tasks extension."""
    return TASKS_EXTENSION in _object(_object(capabilities).get("extensions"))


def extension_meta(capabilities: dict[str, Any]) -> dict[str, Any]:
    """The `_meta` entry by which the sidecar declares the extension to a modern server:
    its own client `capabilities` with the extension among them (the request's own client
    capabilities stand in the envelope for the sidecar's)."""
    extensions = {**_object(capabilities.get("extensions")), TASKS_EXTENSION: {}}
    return {CLIENT_CAPABILITIES: {**capabilities, "extensions": extensions}}


class CreatedTask:
    """A task an answer to `tools/call` created, in either shape: its fields, and
    whether the server spoke the extension."""

    __slots__ = ("fields", "modern")

    def __init__(self, fields: dict[str, Any], modern: bool) -> None:
        self.fields, self.modern = fields, modern


def created_task(result: Any) -> CreatedTask | None:
    """The task a `tools/call` result created; None for a result that ran at once."""
    result = _object(result)
    if result.get("resultType") == "task" and isinstance(result.get("taskId"), str):
        return CreatedTask({k: v for k, v in result.items() if k not in ("resultType", "_meta")}, True)
    task = result.get("task")
    if isinstance(task, dict) and isinstance(task.get("taskId"), str):
        return CreatedTask(task, False)
    return None


def as_legacy(task: dict[str, Any]) -> dict[str, Any]:
    """A task object in the 2025-11-25 shape (nothing inlined, the legacy field names)."""
    shaped = {key: task[key] for key in _BASE if key in task}
    for legacy, modern in _RENAMED:
        value = task.get(legacy, task.get(modern))
        if value is not None or legacy == "ttl":
            shaped[legacy] = value
    return shaped


def as_modern(task: dict[str, Any], **inlined: Any) -> dict[str, Any]:
    """A task object in the extension's shape, with `inlined` members (result, error,
    inputRequests) added; `ttlMs` is always present (null: no limit)."""
    shaped = {key: task[key] for key in _BASE if key in task}
    for legacy, modern in _RENAMED:
        value = task.get(modern, task.get(legacy))
        if value is not None or modern == "ttlMs":
            shaped[modern] = value
    return {**shaped, **{k: v for k, v in inlined.items() if v is not None}}
