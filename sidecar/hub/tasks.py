"""Tasks (MCP 2025-11-25, and the 2026 tasks extension): which upstream owns each task an
engine session made, and the ids the engine sees for them.

A task comes into being only as the answer to a `tools/call` that asked for one (`task`,
or the 2026 extension declared) and passed the gate; `adopt` records it under the
session's owner (its `held_scope`: the engine session, or the caller identity a session
shares with), in the shape the engine asked in whichever shape the upstream used
(`sidecar.wire.task_shapes`), and hands the engine the id
`<alias>~<upstream task id>`, so two upstreams that pick the same id cannot collide. The
table is the authority, not the id's shape: `find` answers only a task this owner made, and
only while the bot may still call the tool that made it; any other id, well formed or not,
is one "unknown task" answer. The table is bounded (oldest forgotten first).

Also owns rewriting ids in what comes back (a task object, a `tasks/list` page, a
result's related-task `_meta`, a status notification) and the `tasks` capability the face
offers: only what some ready upstream offers, of the parts the sidecar routes. No I/O.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

import msgspec

from sidecar.catalog import CatalogEntry
from sidecar.errors import INVALID_PARAMS, EngineInputError
from sidecar.wire.task_shapes import as_legacy, as_modern, created_task, offers_extension

__all__ = ["RELATED_TASK", "TaskRecord", "TaskTable", "tasks_capability"]

RELATED_TASK = "io.modelcontextprotocol/related-task"
TABLE_LIMIT = 4096  # tasks remembered per face; the oldest is forgotten first
SEPARATOR = "~"


class TaskRecord(msgspec.Struct, frozen=True):
    exposed_id: str  # what the engine sees
    alias: str  # the upstream that owns it
    upstream_id: str  # the upstream's own id
    owner: object  # the engine session (or shared caller) that made it
    entry: CatalogEntry  # the tool whose call made it (grants are checked against it)
    modern: bool = False  # its upstream speaks the 2026 tasks extension (else 2025-11-25 tasks)


class TaskTable:
    def __init__(self, limit: int = TABLE_LIMIT) -> None:
        self.limit = limit
        self._by_exposed: OrderedDict[str, TaskRecord] = OrderedDict()
        self._by_upstream: dict[tuple[str, str], str] = {}

    def __len__(self) -> int:
        return len(self._by_exposed)

    def adopt(self, owner: object, entry: CatalogEntry, answer: msgspec.Raw, modern_engine: bool = False) -> msgspec.Raw:
        """A `tools/call` answer: when it created a task (in either shape), the task is
        recorded and handed to the engine under its id, in the shape the engine asked in
        (`modern_engine`: the 2026 extension); any other answer (the upstream ran the call
        at once) as it came."""
        try:
            result = msgspec.json.decode(answer)
        except msgspec.DecodeError:
            return answer
        created = created_task(result)
        if created is None:
            return answer
        record = self._remember(owner, entry, created.fields["taskId"], created.modern)
        task = {**created.fields, "taskId": record.exposed_id}
        if modern_engine:
            shaped: dict[str, Any] = {**as_modern(task), "resultType": "task"}
        elif created.modern:
            shaped = {"task": as_legacy(task)}
        else:
            shaped = {**result, "task": task}  # both 2025-11-25: as it came, the id rewritten
        return msgspec.Raw(msgspec.json.encode(shaped))

    def _remember(self, owner: object, entry: CatalogEntry, upstream_id: str, modern: bool = False) -> TaskRecord:
        exposed = f"{entry.alias}{SEPARATOR}{upstream_id}"
        record = TaskRecord(exposed, entry.alias, upstream_id, owner, entry, modern)
        self._by_exposed[exposed] = record
        self._by_exposed.move_to_end(exposed)
        self._by_upstream[(entry.alias, upstream_id)] = exposed
        while len(self._by_exposed) > self.limit:
            _, old = self._by_exposed.popitem(last=False)
            self._by_upstream.pop((old.alias, old.upstream_id), None)
        return record

    def find(self, owner: object, exposed_id: object) -> TaskRecord:
        """The owner's task by the id the engine holds; every other id is one answer."""
        record = self._by_exposed.get(exposed_id) if isinstance(exposed_id, str) else None
        if record is None or record.owner != owner:  # a session by identity; a stateless caller by value
            raise EngineInputError(f"unknown task {str(exposed_id)[:80]!r} at params.taskId", code=INVALID_PARAMS)
        return record

    def of(self, owner: object) -> list[TaskRecord]:
        return [r for r in self._by_exposed.values() if r.owner == owner]

    def by_upstream(self, alias: str, upstream_id: object) -> TaskRecord | None:
        exposed = self._by_upstream.get((alias, upstream_id)) if isinstance(upstream_id, str) else None
        return self._by_exposed.get(exposed) if exposed is not None else None

    # -- ids in what comes back ------------------------------------------------------------

    def outward_task(self, alias: str, task: Any) -> dict[str, Any] | None:
        """A task object from `alias` with the engine's id, or None when it is not one of ours."""
        if not isinstance(task, dict):
            return None
        record = self.by_upstream(alias, task.get("taskId"))
        return {**task, "taskId": record.exposed_id} if record is not None else None

    def outward_related(self, alias: str, value: Any) -> Any:
        """A result or params whose `_meta` names a related task: that id rewritten too."""
        meta = value.get("_meta") if isinstance(value, dict) else None
        related = meta.get(RELATED_TASK) if isinstance(meta, dict) else None
        if not isinstance(meta, dict) or not isinstance(related, dict):
            return value
        record = self.by_upstream(alias, related.get("taskId"))
        if record is None:
            return value
        return {**value, "_meta": {**meta, RELATED_TASK: {**related, "taskId": record.exposed_id}}}


def tasks_capability(offered: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """The `tasks` capability for the engine: the union of the upstreams' (ready ones),
    limited to what the sidecar routes (list, cancel, task-augmented `tools/call`)."""
    merged: dict[str, Any] = {}
    for caps in offered:
        if offers_extension(caps):  # a 2026 server's tasks: the sidecar lists and cancels them for a 2025 engine
            merged.update({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
        tasks = caps.get("tasks")
        if not isinstance(tasks, dict):
            continue
        for part in ("list", "cancel"):
            if part in tasks:
                merged[part] = {}
        requests = tasks.get("requests")
        tools = requests.get("tools") if isinstance(requests, dict) else None
        if isinstance(tools, dict) and "call" in tools:
            merged["requests"] = {"tools": {"call": {}}}
    return merged or None
