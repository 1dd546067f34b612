"""The gate's terminals: the upstream request, and the questions the sidecar answers
itself (find_tool, a trio's search/describe, query_result).

The upstream route relays progress and cancellation, honours a per-call deadline
(none by default, as engines set their own) and redacts every configured secret from
the answer before anything else sees it (the budget, the held store, the engine); an
upstream's JSON-RPC error keeps its error object, redacted the same way. Local answers
run off the event loop and are bounded: two minutes for search work, the query limits
for query_result.
"""

from __future__ import annotations

import asyncio
import re
import weakref
from collections.abc import Callable
from typing import Any

import msgspec

from sidecar.catalog import Catalog, Listing
from sidecar.upstream.handshake import MODERN_CLIENT_CAPABILITIES
from sidecar.upstream.supervisor import Upstream
from sidecar.wire.task_shapes import declares_tasks, extension_meta, offers_extension
from sidecar.errors import EngineInputError, SidecarError, UpstreamError, UpstreamUnavailable
from sidecar.gate.budget.charge import text_result
from sidecar.gate.call import ToolCall
from sidecar.gate.budget.held import HeldStore
from sidecar.gate.budget.query_meter import QueryLimits
from sidecar.gate.budget.store import SharedHeldStore
from sidecar.redact import Redactor
from sidecar.upstream import Connection, Pool
from sidecar.wire.requests import PROGRESS_TOKEN
from sidecar.wire.versions import CAPABILITIES_KEY, MODERN_VERSION, without_envelope

__all__ = ["ASKS", "SCRUB_IN_THREAD", "failed_upstream", "route_tail", "route_upstream", "answer_locally", "scrub_answer", "SEARCH_SECONDS", "tool_error"]

SEARCH_SECONDS = 120.0
ASKS = re.compile(rb'"input_required"')  # searched in place (no copy); only a hit is decoded
SCRUB_IN_THREAD = 1 << 20  # answers larger than this are redacted in a worker thread


def ask_for_task(params: dict[str, Any], call: ToolCall, upstream: Upstream) -> None:
    """A call whose engine asked for a task asks its upstream in the upstream's own way
    (the answer is then a task the front records): a server that speaks the 2026 tasks
    extension is told the client declares it, among the capabilities it is sent anyway (and
    gets no `params.task`); a 2025-11-25 one
    gets `params.task`, which for an engine that declared the extension goes only to a
    tool that may run as a task."""
    modern_engine = call.task is None and declares_tasks(call.meta)
    if call.task is None and not modern_engine:
        return
    if offers_extension(upstream.capabilities):
        params.pop("task", None)
        meta = params.get("_meta", {})
        relayed = meta.get(CAPABILITIES_KEY)  # a relayed call's own engine's (`_relaying`), else the sidecar's
        params["_meta"] = {**meta, **extension_meta(relayed if isinstance(relayed, dict) else MODERN_CLIENT_CAPABILITIES)}
    elif modern_engine and call.target is not None and _may_run_as_task(call.target.spec):
        params["task"] = {}


def _may_run_as_task(tool: dict[str, Any]) -> bool:
    execution = tool.get("execution")
    return isinstance(execution, dict) and execution.get("taskSupport") in ("optional", "required")


def tool_error(text: str) -> msgspec.Raw:
    return msgspec.Raw(msgspec.json.encode(text_result(text, True)))


async def route_upstream(call: ToolCall, pool: Pool, deadline: float | None, scrub: Redactor | None = None) -> ToolCall:
    """Run `call` upstream; it comes back ended: completed with the answer, or failed with
    the error the route met (the terminal stage hands this coroutine on, no frame around it)."""
    target = call.target
    assert target is not None
    try:
        upstream = pool.get(target.alias)
        if upstream is None:
            raise UpstreamUnavailable(f"upstream '{target.alias}' is not configured")
        conn = upstream.ready_connection()
        params: dict[str, Any] = {"name": target.name, "arguments": call.arguments}
        # A plain call (no _meta, no task, no relayed round) is sent as it is: one test.
        relay = _dressed(call, params, upstream) if call.meta or call.task is not None or call.relay is not None else None
        answer = await conn.request("tools/call", params, call.progress, call.on_sent, deadline)
    except UpstreamError as exc:
        return failed_upstream(call, exc, scrub)
    except SidecarError as exc:
        return call.fail(exc)
    if ASKS.search(answer) is not None or scrub and len(answer) > SCRUB_IN_THREAD:
        return await route_tail(call, conn, params, answer, deadline, scrub, relay)
    return call.complete(scrub_answer(answer, scrub) if scrub else answer)


async def route_tail(call: ToolCall, conn: Connection, params: dict[str, Any], answer: msgspec.Raw,
                deadline: float | None, scrub: Redactor | None, relay: Any) -> ToolCall:
    """What follows an answer that holds a server's questions or is too large to scrub on
    the loop (for a call sent by `route_upstream`, or started: `sidecar.gate.inline`); it
    ends the call."""
    try:
        if ASKS.search(answer) is not None:  # a 2026-07-28 server's questions (sidecar.gate.asked)
            from sidecar.gate.asked import answer_rounds

            def send(again: dict[str, Any]) -> Any:  # built only for a call that has rounds to answer
                return conn.request("tools/call", again, call.progress, call.on_sent, deadline)

            target = call.target
            assert target is not None
            answer = await answer_rounds(answer, params, send, call.ask_engine, target.alias, scrub, relay=relay)
    except UpstreamError as exc:
        return failed_upstream(call, exc, scrub)
    except SidecarError as exc:
        return call.fail(exc)
    if not scrub:  # no secret configured: the answer's bytes go as they came
        return call.complete(answer)
    if len(answer) > SCRUB_IN_THREAD:
        return call.complete(await asyncio.to_thread(scrub_answer, answer, scrub))
    return call.complete(scrub_answer(answer, scrub))


def failed_upstream(call: ToolCall, exc: UpstreamError, scrub: Redactor | None) -> ToolCall:
    if scrub and exc.raw is not None:  # the upstream's error object, as redacted as its results
        exc.raw = scrub.json(exc.raw)
    return call.fail(exc)


def _dressed(call: ToolCall, params: dict[str, Any], upstream: Upstream) -> Any:
    """`params` with what a call that is not plain carries to its upstream (its `_meta`
    without the engine's envelope and progress token, its task, a relayed round's members);
    returns the relay of a 2026-07-28 round, else None."""
    if call.meta:
        rest = {k: v for k, v in without_envelope(call.meta).items() if k != PROGRESS_TOKEN}
        if rest:
            params["_meta"] = rest
    if call.task is not None:  # the answer is then a CreateTaskResult (the front records the task)
        params["task"] = call.task
    modern = call.relay is not None and upstream.info is not None and upstream.info.protocol_version == MODERN_VERSION
    relay = _relaying(call, params) if modern else None
    if call.task is not None or call.meta:  # only such a call can ask for a task
        ask_for_task(params, call, upstream)
    return relay


def _relaying(call: ToolCall, params: dict[str, Any]) -> Any:
    """For a 2026-07-28 engine and server: the engine's capabilities, answers and the
    server's state go into `params`; the server's questions go back as they are."""
    if call.relay is None:
        return None
    params["_meta"] = {**params.get("_meta", {}), CAPABILITIES_KEY: call.relay.capabilities()}
    if call.answers is not None:
        params["inputResponses"] = call.answers
    if call.upstream_state is not None:
        params["requestState"] = call.upstream_state
    confirmed = any(stage == "confirm" and action == "allow" for stage, action, _ in call.decisions)
    return lambda asked: call.relay.wrap(asked, confirmed)


def scrub_answer(answer: msgspec.Raw, scrub: Redactor) -> msgspec.Raw:
    """An upstream's answer with every configured secret in it redacted; the same bytes
    (not copied) when it holds none."""
    raw = bytes(answer)
    cleaned = scrub.json(raw)
    return answer if cleaned is raw else msgspec.Raw(cleaned)


async def answer_locally(
    call: ToolCall,
    catalog: Catalog,
    listing: Listing,
    held: HeldStore | SharedHeldStore,
    allowed: Callable[[str], bool],
    limits: QueryLimits,
) -> ToolCall:
    if call.local == "query_result":
        return call.complete(await _query(call, held, limits))
    from sidecar.catalog.answers import answer_meta

    def answer() -> dict[str, Any]:
        result: dict[str, Any] = answer_meta(listing, catalog, call.name, call.arguments, allowed)
        return result

    try:
        async with asyncio.timeout(SEARCH_SECONDS):
            result = await asyncio.to_thread(answer)
    except TimeoutError:
        return call.complete(tool_error(f"the search did not finish within {SEARCH_SECONDS:g}s; try fewer words"))
    return call.complete(msgspec.Raw(msgspec.json.encode(result)))


async def _query(call: ToolCall, held: HeldStore | SharedHeldStore, limits: QueryLimits) -> msgspec.Raw:
    handle = call.arguments.get("handle")
    expression = call.arguments.get("query")
    if not isinstance(expression, str):  # a tool execution error the model can correct, as for find_tool
        return tool_error("query_result needs `query`, a JMESPath expression, at params.arguments.query")
    found = await held.fetch(call.session, handle)
    if found is None:
        return tool_error(f"no held result has the handle {str(handle)[:64]!r} (results are held for this session only, oldest dropped first)")
    call.held_under = found.upstream
    from sidecar.gate.budget.query import answer_query  # the first query loads it: off the start path

    async with _query_slot():
        return msgspec.Raw(await asyncio.to_thread(answer_query, found.payload, expression, limits))


_QUERY_SLOTS = 2  # queries evaluated at once; more wait their turn
_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


def _query_slot() -> asyncio.Semaphore:
    """This loop's semaphore: at most _QUERY_SLOTS queries hold decoded payloads at once."""
    loop = asyncio.get_running_loop()
    slot = _slots.get(loop)
    if slot is None:
        slot = _slots[loop] = asyncio.Semaphore(_QUERY_SLOTS)
    return slot


def unknown_tool(name: str) -> SidecarError:
    """One error for unknown, hidden and denied tools alike: the model cannot probe."""
    return EngineInputError(f"unknown tool '{name}' at params.name")
