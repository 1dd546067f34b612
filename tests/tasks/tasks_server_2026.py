"""A 2026-07-28-only MCP upstream that serves the tasks extension
(`io.modelcontextprotocol/tasks`, SEP-2663) on the `mcp` SDK's low-level server, over
Streamable HTTP on loopback. `initialize` is refused, as a server without the session
revisions does (tests/eras/modern_server.py's ASGI layer).

    python tests/tasks/tasks_server_2026.py [--events FILE]

Prints `PORT <n>`; the endpoint is `/mcp`. It advertises the extension under
`capabilities.extensions` and creates a task only for a request whose `_meta` client
capabilities declare it (else a task-supporting tool runs at once). Tools:
    greet {name}           never a task: "Hello, <name>!"
    slow_compute {label}   a task that completes when `release {label}` is called
    slow_compute {seconds} a task that completes after that many seconds (0: at once)
    release {label}        never a task: lets that slow_compute finish
    failing_job {}         a task whose tool reports an error (completed, isError)
    protocol_error_job {}  a task that fails (failed, with an error object)
    ask_job {}             a task that turns input_required (a form, key "who"),
                           completes with the name once `tasks/update` answers it
Methods: tasks/get (DetailedTask: result, error or inputRequests inlined), tasks/update,
tasks/cancel (an empty ack), each refused with -32021 to a request that did not declare
the extension and with -32602 for an unknown task. There is no tasks/result or tasks/list.
"""

from __future__ import annotations

import asyncio
import datetime
import sys
import uuid
import warnings
from pathlib import Path
from typing import Any

warnings.simplefilter("ignore")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import mcp_types as types  # noqa: E402
from mcp.server.context import ServerRequestContext  # noqa: E402
from mcp.server.lowlevel import Server  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from tests.upstreams.event_file import Events  # noqa: E402
from tests.upstreams.loopback import serve_2026_only  # noqa: E402

TASKS = "io.modelcontextprotocol/tasks"
CAPS = "io.modelcontextprotocol/clientCapabilities"
MISSING_CAPABILITY = -32021
NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def _tool(tool_name: str, task: bool, **props: Any) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": tool_name, "description": f"The tasks test tool {tool_name}.",
                            "inputSchema": {"type": "object", "properties": props}}
    if task:
        tool["execution"] = {"taskSupport": "optional"}
    return tool


TOOLS = [_tool("greet", False, name={"type": "string"}),
         _tool("slow_compute", True, label={"type": "string"}, seconds={"type": "number"}),
         _tool("release", False, label={"type": "string"}), _tool("ask_job", True), _tool("failing_job", True),
         _tool("protocol_error_job", True)]
TASK_TOOLS = frozenset({"slow_compute", "ask_job", "failing_job", "protocol_error_job"})


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat()


def _text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


class TaskIdParams(types.RequestParams):
    taskId: str  # noqa: N815 - the wire's name


class UpdateParams(TaskIdParams):
    inputResponses: dict[str, Any] = {}  # noqa: N815


def _declared(meta: Any) -> bool:
    caps = (meta or {}).get(CAPS) if isinstance(meta, dict) else None
    extensions = caps.get("extensions") if isinstance(caps, dict) else None
    return isinstance(extensions, dict) and TASKS in extensions



class TaskUpstream:
    def __init__(self, events: Events) -> None:
        self.events = events
        self.tasks: dict[str, dict[str, Any]] = {}
        self.releases: dict[str, asyncio.Event] = {}
        self.answers: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.runners: dict[str, asyncio.Task[None]] = {}

    async def list_tools(self, ctx: ServerRequestContext, params: Any) -> dict[str, Any]:
        return {"tools": TOOLS, "resultType": "complete", "ttlMs": 0, "cacheScope": "private"}

    async def call_tool(self, ctx: ServerRequestContext, params: types.CallToolRequestParams) -> Any:
        args = params.arguments or {}
        as_task = _declared(params.meta) and params.name in TASK_TOOLS
        self.events.emit("call", tool=params.name, task=as_task, legacy_task=params.task is not None)
        if params.name == "greet":
            return types.CallToolResult(content=[types.TextContent(type="text", text=f"Hello, {args.get('name')}!")])
        if params.name == "release":
            self._release(str(args.get("label", ""))).set()
            return types.CallToolResult(content=[types.TextContent(type="text", text="released")])
        if params.name not in TASK_TOOLS:
            raise MCPError(code=-32602, message=f"Unknown tool: {params.name}")
        work = self._work(params.name, args)
        if not as_task:
            return await self._run_now(params.name, work)
        return self._start(params.name, work)

    async def _run_now(self, name: str, work: Any) -> Any:
        if work is None:
            raise MCPError(code=-32602, message="ask_job runs only as a task")
        return types.CallToolResult.model_validate(await work)

    def _work(self, name: str, args: dict[str, Any]) -> Any:
        if name == "slow_compute" and isinstance(args.get("seconds"), int | float):
            return self._sleep(float(args["seconds"]), str(args.get("label", "")))
        if name == "slow_compute":
            return self._compute(str(args.get("label", "")))
        if name == "failing_job":
            return self._failing()
        if name == "protocol_error_job":
            return self._broken()
        return None

    async def _sleep(self, seconds: float, label: str) -> dict[str, Any]:
        await asyncio.sleep(seconds)
        return {"content": [_text(f"computed {label} in {seconds:g} s")]}

    async def _failing(self) -> dict[str, Any]:
        await asyncio.sleep(0.2)
        return {"content": [_text("the job failed")], "isError": True}

    async def _broken(self) -> dict[str, Any]:
        await asyncio.sleep(0.2)
        raise RuntimeError("the job broke")

    def _release(self, label: str) -> asyncio.Event:
        return self.releases.setdefault(label, asyncio.Event())

    async def _compute(self, label: str) -> dict[str, Any]:
        await self._release(label).wait()
        return {"content": [_text(f"computed {label}")], "structuredContent": {"label": label}}

    def _start(self, name: str, work: Any) -> dict[str, Any]:
        ident = uuid.uuid4().hex[:12]
        now = _now()
        task = {"taskId": ident, "status": "working", "createdAt": now, "lastUpdatedAt": now, "ttlMs": 600_000,
                "pollIntervalMs": 50}
        self.tasks[ident] = task
        self.runners[ident] = asyncio.get_running_loop().create_task(
            self._drive(ident, work if work is not None else self._ask(ident)))
        self.events.emit("task", taskId=ident, tool=name)
        return {**task, "resultType": "task"}

    async def _ask(self, ident: str) -> dict[str, Any]:
        answer = self.answers[ident] = asyncio.get_running_loop().create_future()
        form = {"method": "elicitation/create", "params": {"mode": "form", "message": "Who runs this job?",
                                                            "requestedSchema": NAME_FORM}}
        self._set(ident, "input_required", inputRequests={"who": form})
        given = await answer
        self._set(ident, "working")
        return {"content": [_text(f"job for {given.get('content', {}).get('name')}")]}

    async def _drive(self, ident: str, work: Any) -> None:
        try:
            result = await work
        except asyncio.CancelledError:
            self._set(ident, "cancelled")
            self.events.emit("cancelled", taskId=ident)
            return
        except Exception as exc:  # a protocol-level failure of the task
            self._set(ident, "failed", error={"code": -32603, "message": str(exc)})
            return
        self._set(ident, "completed", result=result)

    def _set(self, ident: str, status: str, **inline: Any) -> None:
        task = self.tasks[ident]
        for key in ("result", "error", "inputRequests"):
            task.pop(key, None)
        task.update(status=status, lastUpdatedAt=_now(), **inline)

    def _task(self, ctx: ServerRequestContext, params: TaskIdParams) -> dict[str, Any]:
        if not _declared(params.meta):
            raise MCPError(code=MISSING_CAPABILITY, message=f"the client did not declare {TASKS}",
                           data={"requiredCapabilities": {"extensions": {TASKS: {}}}})
        task = self.tasks.get(params.taskId)
        if task is None:
            raise MCPError(code=-32602, message=f"unknown task {params.taskId!r}")
        return task

    async def get(self, ctx: ServerRequestContext, params: TaskIdParams) -> dict[str, Any]:
        task = self._task(ctx, params)
        self.events.emit("get", taskId=params.taskId, status=task["status"])
        return {**task, "resultType": "complete"}

    async def update(self, ctx: ServerRequestContext, params: UpdateParams) -> dict[str, Any]:
        self._task(ctx, params)
        self.events.emit("update", taskId=params.taskId, answers=params.inputResponses)
        waiting = self.answers.pop(params.taskId, None)
        if waiting is not None and not waiting.done() and "who" in params.inputResponses:
            waiting.set_result(params.inputResponses["who"])
        return {"resultType": "complete"}

    async def cancel(self, ctx: ServerRequestContext, params: TaskIdParams) -> dict[str, Any]:
        task = self._task(ctx, params)
        self.events.emit("cancel", taskId=params.taskId)
        runner = self.runners.get(params.taskId)
        if task["status"] in ("working", "input_required") and runner is not None:
            runner.cancel()
            await asyncio.wait([runner])  # the ack follows the cancelled status
        return {"resultType": "complete"}

    def build(self) -> Server:
        server = Server("tasks-2026", version="1.0.0", on_list_tools=self.list_tools, on_call_tool=self.call_tool)
        server.extensions[TASKS] = {}
        server.add_request_handler("tasks/get", TaskIdParams, self.get)
        server.add_request_handler("tasks/update", UpdateParams, self.update)
        server.add_request_handler("tasks/cancel", TaskIdParams, self.cancel)
        return server


if __name__ == "__main__":
    serve_2026_only(lambda events: TaskUpstream(events).build())
