"""The engine-facing MCP methods of the session revisions (2024-11-05 to 2025-11-25), and
the table the dispatcher reads them from.

Owns what each method answers: `initialize` (the version chosen from what the engine
offers, the union of the upstreams' capabilities), the tool listing and the tool call
(through the gate), and resources, prompts and completions routed by name or URI to the
upstream that owns them. Each handler takes its params typed (`sidecar.wire.requests`):
the dispatcher refused params that do not fit with -32602 naming the field before it runs.

The ways only some calls take (a 2026-07-28 engine's round, asking the person, a
subscription on a stateless server, the tasks methods) load their modules on first use:
a start that serves plain calls never imports them (`tests/test_start_modules.py`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from sidecar.catalog.apps import ui_extension
from sidecar.front.handling import Handler, Handling, PlainStarter, Result, Starter
from sidecar.gate import ToolCall
from sidecar.gate.inline import Started
from sidecar.gate.answer import call_answer
from sidecar.hub.face import Face, decode_cursor
from sidecar.hub.tasks import tasks_capability
from sidecar.upstream import Connection, lifecycle
from sidecar.wire import Request
from sidecar.wire.hello import TASKS_WHILE_STARTING, hello_of, offer
from sidecar.wire.requests import (
    CallParams,
    CompleteParams,
    InitializeParams,
    LevelParams,
    PageParams,
    PromptParams,
    PromptRef,
    ResourceRef,
    UriParams,
)
from sidecar.wire.task_shapes import TASKS_EXTENSION, declares_tasks
from sidecar.wire.versions import ENVELOPE_KEYS, MODERN_VERSION, UI_EXTENSION


__all__ = ["METHODS", "PLAIN_CALL", "STARTERS", "server_capabilities"]

_EMPTY = b"{}"


async def initialize(d: Handling, req: Request, params: InitializeParams) -> Result:
    hello = hello_of(req.params, server_capabilities(d.face))
    d.session.protocol_version = hello.version
    d.session.client_capabilities = hello.client_capabilities
    d.session.client_info = hello.client_info
    return hello.result


def server_capabilities(face: Face) -> dict[str, Any]:
    """The union of what upstreams offer; one still starting counts as offering it all."""
    offered: dict[str, Any] = {"tools": {"listChanged": True}}
    for upstream in face.pool:
        caps = upstream.capabilities if lifecycle.is_ready(upstream.state) else None
        if caps is None and not lifecycle.is_starting(upstream.state):
            continue
        offer(offered, caps)
    tasks = tasks_capability(_tasks_offers(face))
    if tasks is not None:
        offered["tasks"] = tasks
    ui = ui_extension([u.capabilities if lifecycle.is_ready(u.state) else None for u in face.pool
                       if lifecycle.is_ready(u.state) or lifecycle.is_starting(u.state)])
    if ui is not None:  # MCP Apps: the host learns `ui://` resources and `_meta.ui` come through
        offered["extensions"] = {UI_EXTENSION: ui}
    if tasks is not None and "call" in tasks.get("requests", {}).get("tools", {}):  # the 2026 tasks extension too
        offered["extensions"] = {**offered.get("extensions", {}), TASKS_EXTENSION: {}}
    return offered


def _tasks_offers(face: Face) -> list[dict[str, Any]]:
    """What each upstream offers of tasks; one still starting, as for the rest, everything
    the sidecar routes (an engine that then sends a task request gets "unknown task")."""
    every: dict[str, Any] = {"tasks": TASKS_WHILE_STARTING}
    return [u.capabilities if lifecycle.is_ready(u.state) else every
            for u in face.pool if lifecycle.is_ready(u.state) or lifecycle.is_starting(u.state)]


async def tools_list(d: Handling, req: Request, params: PageParams) -> Result:
    await d.face.wait_for_first_start()
    return d.face.tools_page(0 if params.cursor is None else decode_cursor(params.cursor))


async def tools_call(d: Handling, req: Request, params: CallParams) -> Result:
    session, gate, meta = d.session, d.face.gate, params.meta
    call = _call_of(d, req, params)
    if meta is not None:  # no _meta, no progress token
        call.meta, call.progress = meta, d.progress_sink(req, params)
    if params.task is not None:
        call.task = params.task
    relayed = None
    if session.protocol_version == MODERN_VERSION:  # a 2026-07-28 engine's round (sidecar.front.eras.relayed)
        from sidecar.front.confirming import caller_of
        from sidecar.front.eras.relayed import relayed_round

        call.relay, relayed, call.answers = relayed_round(d.face, session, caller_of(session), req.params, req.method)
        call.upstream_state = relayed.inner if relayed is not None else None
    if gate.confirms:  # only a policy stage asks the person
        from sidecar.front.confirming import confirmer_for

        call.confirmer = confirmer_for(session, req, relayed)
    await gate.run(call)
    return _answer_of(d, call, meta)


def start_tools_call(d: Handling, req: Request, params: CallParams) -> bool:
    """`tools/call` with no task of its own when its whole way is plain (no `_meta`, no
    task, the gate's chain plain: `Gate.start`): sent upstream here, in the reader's
    callback, and answered from its answer's done callback. A 2026-07-28 engine's call is
    plain too when its `_meta` is its envelope alone (no progress token, no tasks
    extension declared), it brings back no round and its server is not a 2026-07-28 one:
    the chain would send that server what `Gate.start` sends. False when it is not plain:
    nothing was sent, and `tools_call` takes it."""
    if params.task is not None:
        return False
    if d.session.protocol_version == MODERN_VERSION and ("requestState" in req.params or "inputResponses" in req.params):
        return False  # a round brought back: the chain relays it
    arguments = params.arguments
    return start_plain_call(d, req, params.name, {} if arguments is None else arguments, params.meta)


def start_plain_call(d: Handling, req: Request, name: str, arguments: dict[str, Any],
                     meta: dict[str, Any] | None = None) -> bool:
    """`start_tools_call` once the params are known to hold no task and no round brought
    back: the dispatcher calls it with what it read from the request's own params when
    they are a name, arguments and at most a `_meta` object (`PlainStarter`: no params
    struct made). Plain when the gate's chain is, and `meta` is None or, from a
    2026-07-28 engine, its envelope alone. False: nothing was sent, and `tools_call` takes it."""
    gate, session = d.face.gate, d.session  # a chain that is not plain: `Gate.start` says None
    modern = session.protocol_version == MODERN_VERSION
    if meta is not None and not (modern and ENVELOPE_KEYS.issuperset(meta) and not declares_tasks(meta)):
        return False
    started = gate.start(ToolCall(name=name, arguments=arguments, session=session.held_scope), modern)
    if started is None:
        return False
    session.in_flight[req.id] = (started.conn, started.ident)  # where it went: a cancel follows it
    if started.over:  # it ended while being sent (a transport that faulted): answered in the next turn
        started.arm(_answered, d, req)
    else:  # `Started.arm`, inline: answered when the connection ends it (no future)
        started.then, started.front, started.request = _answered, d, req
    hold = d.hold  # None when the session's owner finds it through where it went (`Dispatcher.held`)
    if hold is not None:
        hold(started)
    return True


def _call_of(d: Handling, req: Request, params: CallParams) -> ToolCall:
    # The fields a plain call leaves at their defaults are set only when they hold something
    # (each keyword a struct is built with costs it a look-up).
    return ToolCall(name=params.name, arguments={} if params.arguments is None else params.arguments,
                    session=d.session.held_scope, on_sent=d.mark_sent(req), ask_engine=d.ask_engine)


def _answer_of(d: Handling, call: ToolCall, meta: dict[str, Any] | None) -> Result:
    """What the engine gets for an ended call (a task's record, for a call made a task)."""
    result = call.result
    answer = result if call.outcome == "completed" and result is not None else call_answer(call, d.redact)
    modern = call.task is None and meta is not None and declares_tasks(meta)  # the 2026 tasks extension
    if (call.task is not None or modern) and call.target is not None:  # a task made by a call that passed the gate
        return d.face.tasks.adopt(d.session.held_scope, call.target, answer, modern_engine=modern)
    return answer


def _answered(started: Started) -> None:
    """A started call's answer, when it ended (`started.front` the dispatcher, and
    `started.request` the request, given by `Started.arm`: no closure or bound method per call)."""
    d: Handling = started.front
    req: Request = started.request
    passing = started.passing()
    if passing is not None:  # the answer first; the call's end, off the answer's way, right after
        session, ident = d.session, req.id
        if session.in_flight.pop(ident, False) is not False:
            session.answer(ident, passing)
        started.passed(passing)
        return
    try:
        tail = started.end()
        if tail is None:  # ended: a plain call's answer (no _meta, no task: nothing to adopt)
            call = started.call
            raw = call.result
            result: Result = raw if call.outcome == "completed" and raw is not None else call_answer(call, d.redact)
    except asyncio.CancelledError:  # the session closed while it waited: recorded, no answer
        return
    except Exception as exc:  # as `tools_call` raising: its error answers (a cancelled call, none)
        d.fail(req, exc)
        return
    if tail is None:  # `Dispatcher.answer`, inline (a tools/call is never `initialize`)
        session, ident = d.session, req.id
        if session.in_flight.pop(ident, False) is not False:
            session.answer(ident, result)
    else:  # the rest must wait (questions, a large scrub, a result over budget): a task of its own
        call = started.call  # what a server's further rounds need (only they read these)
        call.on_sent, call.ask_engine = d.mark_sent(req), d.ask_engine
        d.spawn(d.serve(req, _finished(d, call, tail)))


async def _finished(d: Handling, call: ToolCall, tail: Awaitable[Any]) -> Result:
    await d.face.gate.run(call, tail)
    return _answer_of(d, call, None)


async def resources_list(d: Handling, req: Request, params: PageParams) -> Result:
    return {"resources": [r for u in d.face.pool.ready() for r in u.listing.resources]}


async def resource_templates_list(d: Handling, req: Request, params: PageParams) -> Result:
    return {"resourceTemplates": [t for u in d.face.pool.ready() for t in u.listing.templates]}


async def by_uri(d: Handling, req: Request, params: UriParams) -> Result:
    return await d.forward(req, params, await d.face.upstream_for_resource(params.uri))


async def resource_subscription(d: Handling, req: Request, params: UriParams) -> Result:
    """Passed on to a session-era upstream; a 2026-07-28 one hears of it on the sidecar's listen stream.
    The session hears the URI's updates from then on (until it unsubscribes); an unsubscribe
    while another session still asks for the URI stays here."""
    from sidecar.front.eras.listen_resources import watched_on_stateless

    upstream = await d.face.upstream_for_resource(params.uri)
    subscribing = req.method == "resources/subscribe"
    if not subscribing and d.face.watched_by_another(params.uri, d.session):
        answer: Result = {}
    elif watched_on_stateless(upstream, params.uri, subscribing):
        answer = {}
    else:
        answer = await d.forward(req, params, upstream)
    (d.session.resource_uris.add if subscribing else d.session.resource_uris.discard)(params.uri)
    return answer


async def prompts_list(d: Handling, req: Request, params: PageParams) -> Result:
    return {"prompts": [entry.spec for entry in d.face.catalog.prompts]}


async def prompts_get(d: Handling, req: Request, params: PromptParams) -> Result:
    upstream, name = await d.face.upstream_for_prompt(params.name)
    return await d.forward(req, params, upstream, {**req.params, "name": name})


async def completion_complete(d: Handling, req: Request, params: CompleteParams) -> Result:
    ref = params.ref
    if type(ref) is PromptRef:
        upstream, name = await d.face.upstream_for_prompt(ref.name)
        return await d.forward(req, params, upstream, {**req.params, "ref": {**req.params["ref"], "name": name}})
    assert type(ref) is ResourceRef
    return await d.forward(req, params, await d.face.upstream_for_resource(ref.uri))


async def logging_set_level(d: Handling, req: Request, params: LevelParams) -> Result:
    for upstream in d.face.pool.ready():
        if "logging" in upstream.capabilities:
            conn = upstream.ready_connection()
            ident, answer = conn.start_request("logging/setLevel", {"level": params.level})
            answer.add_done_callback(_forget_when_done(conn, ident))
    return _EMPTY


def _forget_when_done(conn: Connection, ident: int) -> Callable[[object], None]:
    return lambda _: conn.forget(ident)


# The tasks methods (`sidecar.front.task_methods`) load on an engine's first tasks request:
# a session that makes no task never imports them.
TASK_METHOD_NAMES = ("tasks/get", "tasks/cancel", "tasks/result", "tasks/list", "tasks/update")


def _task_method(name: str) -> Handler:
    async def handle(d: Handling, req: Request, params: Any) -> Result:
        from sidecar.front.task_methods import TASK_METHODS

        return await TASK_METHODS[name](d, req, params)

    return handle


METHODS: dict[str, Handler] = {
    "initialize": initialize,
    "tools/list": tools_list,
    "tools/call": tools_call,
    "resources/list": resources_list,
    "resources/templates/list": resource_templates_list,
    "resources/read": by_uri,
    "resources/subscribe": resource_subscription,
    "resources/unsubscribe": resource_subscription,
    "prompts/list": prompts_list,
    "prompts/get": prompts_get,
    "completion/complete": completion_complete,
    "logging/setLevel": logging_set_level,
    **{name: _task_method(name) for name in TASK_METHOD_NAMES},
}

# Methods with a way that needs no task of its own when it is plain (`Starter`).
STARTERS: dict[str, Starter] = {"tools/call": start_tools_call}

# `tools/call`'s starter for params that are a name and arguments alone (`PlainStarter`).
PLAIN_CALL: PlainStarter = start_plain_call
