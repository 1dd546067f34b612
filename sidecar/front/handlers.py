"""The engine-facing MCP methods, and the dispatcher that turns each frame from the
engine into exactly one answer (or none, for notifications and cancelled requests).

Owns the method table. Refuses: ids already in flight, unknown methods (-32601), bad
params (-32602, naming the parameter). Any unexpected exception becomes -32603 naming the
method and the kind of fault (a missing module names its package and how to install it;
the traceback goes to the log at DEBUG only, redacted), and the process keeps serving.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import msgspec

from sidecar import __version__
from sidecar.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    CallCancelled,
    EngineInputError,
    SidecarError,
    UpstreamUnavailable,
)
from sidecar.features import missing_module_words
from sidecar.front.confirming import confirmer_for
from sidecar.front.face import Face, decode_cursor
from sidecar.front.session import EngineSession
from sidecar.gate import ToolCall
from sidecar.gate.route import scrub_answer, tool_error
from sidecar.redact import Redactor
from sidecar.upstream import Connection, Upstream
from sidecar.upstream.handshake import HANDSHAKE_VERSIONS
from sidecar.wire import (
    FrameRejected,
    Notification,
    Request,
    Response,
    decode_engine_frame,
    encode_error,
    encode_result,
)

__all__ = ["Dispatcher"]

log = logging.getLogger(__name__)

Result = bytes | msgspec.Raw | dict[str, Any]
Handler = Callable[["Dispatcher", Request], Awaitable[Result]]
_EMPTY = b"{}"


def _text_param(req: Request, key: str) -> str:
    value = req.params.get(key)
    if not isinstance(value, str):
        raise EngineInputError(f"params.{key} must be a string")
    return value


def unexpected_fault(method: str, exc: Exception) -> str:
    """The words for an exception no handler expected; its traceback only at DEBUG."""
    log.warning("%s failed: %s", method, type(exc).__name__)
    log.debug("%s failed with this traceback", method, exc_info=exc)
    if isinstance(exc, ModuleNotFoundError):
        return missing_module_words(method, exc.name)
    return f"{method} failed: an unexpected {type(exc).__name__} inside the sidecar (its log has more at DEBUG)"


class Dispatcher:
    """Reads engine frames for one session and answers each request exactly once."""

    def __init__(
        self,
        face: Face,
        session: EngineSession,
        spawn: Callable[[Coroutine[Any, Any, None]], None],
        redactor: Redactor | None = None,
    ) -> None:
        self.face = face
        self.session = session
        self.spawn = spawn
        self.redact = redactor or Redactor()

    # -- frames in ----------------------------------------------------------------

    def feed(self, line: bytes) -> None:
        message = decode_engine_frame(line)
        if type(message) is Request:
            self._request(message)
        elif type(message) is Notification:
            self._notification(message)
        elif type(message) is Response:
            self._engine_answer(message)
        else:
            assert isinstance(message, FrameRejected)
            self.session.send(encode_error(message.id, message.code, message.message))

    def _request(self, req: Request) -> None:
        session = self.session
        if req.method == "ping":
            session.send(encode_result(req.id, _EMPTY))
            return
        if req.id in session.in_flight:
            session.send(encode_error(req.id, INVALID_REQUEST, f"id {req.id!r} is already in use by a request in flight"))
            return
        handler = HANDLERS.get(req.method)
        if handler is None:
            session.send(encode_error(req.id, METHOD_NOT_FOUND, f"method not found: {req.method}"))
            return
        session.in_flight[req.id] = None
        if self.face.tracer is not None:
            handler = self.face.tracer.wrap(handler)
        self.spawn(self._serve(handler, req))

    async def _serve(self, handler: Handler, req: Request) -> None:
        try:
            frame = encode_result(req.id, await handler(self, req))
        except CallCancelled:
            return
        except SidecarError as exc:
            frame = encode_error(req.id, exc.code, self.redact(exc.message))
        except Exception as exc:
            frame = encode_error(req.id, INTERNAL_ERROR, self.redact(unexpected_fault(req.method, exc)))
        if self.session.in_flight.pop(req.id, False) is not False:
            self.session.send(frame)
            if req.method == "initialize":
                self.session.announced = True

    def _notification(self, note: Notification) -> None:
        if note.method == "notifications/cancelled":
            self.session.cancel(note.params.get("requestId"))  # type: ignore[arg-type]
        elif note.method == "notifications/roots/list_changed":
            for upstream in self.face.pool.ready():
                upstream.ready_connection().notify(note.method)

    def _engine_answer(self, answer: Response) -> None:
        waiting = self.session.relayed.release(answer.id)
        if waiting is None:
            return
        conn, upstream_id = waiting
        if answer.error is not None:
            code = answer.error.get("code")
            message = answer.error.get("message")
            conn.respond_error(upstream_id, code if type(code) is int else INTERNAL_ERROR,
                               message if isinstance(message, str) else "the client reported an error")
        else:
            conn.respond(upstream_id, answer.result if answer.result is not None else {})

    # -- relaying -----------------------------------------------------------------

    def progress_sink(self, req: Request) -> Callable[[dict[str, Any]], None] | None:
        meta = req.params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if type(token) not in (int, str):
            return None
        session = self.session
        scrub = self.face.gate.answers

        def relay(params: dict[str, Any]) -> None:
            if req.id in session.in_flight:
                session.notify("notifications/progress", {**(scrub.clean(params) if scrub else params),
                                                          "progressToken": token})

        return relay

    def mark_sent(self, req: Request) -> Callable[[Any, int], None]:
        def sent(conn: Any, upstream_id: int) -> None:
            if req.id in self.session.in_flight:
                self.session.in_flight[req.id] = (conn, upstream_id)

        return sent

    async def forward(self, req: Request, upstream: Upstream, params: dict[str, Any] | None = None) -> msgspec.Raw:
        """Send `req` to one upstream under a fresh id; cancellation and progress follow it;
        configured secrets are redacted from the answer."""
        body = req.params if params is None else params
        conn = upstream.ready_connection()
        if self.face.tracer is not None:  # a client span, its context in the _meta sent on
            def send(traced: dict[str, Any]) -> Awaitable[msgspec.Raw]:
                return conn.request(req.method, traced, self.progress_sink(req), self.mark_sent(req))

            answer: msgspec.Raw = await self.face.tracer.forward(send, body or {}, upstream.config, req.method)
        else:
            answer = await conn.request(req.method, body or None, self.progress_sink(req), self.mark_sent(req))
        scrub = self.face.gate.answers
        return scrub_answer(answer, scrub) if scrub else answer


# -- the methods ------------------------------------------------------------------------


async def initialize(d: Dispatcher, req: Request) -> Result:
    offered = req.params.get("protocolVersion")
    version = offered if offered in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
    capabilities = req.params.get("capabilities")
    info = req.params.get("clientInfo")
    d.session.protocol_version = version
    d.session.client_capabilities = capabilities if isinstance(capabilities, dict) else {}
    d.session.client_info = info if isinstance(info, dict) else {}
    return {
        "protocolVersion": version,
        "capabilities": server_capabilities(d.face),
        "serverInfo": {"name": "omb-sidecar", "version": __version__},
    }


def server_capabilities(face: Face) -> dict[str, Any]:
    """The union of what upstreams offer; one still starting counts as offering it all."""
    offered: dict[str, Any] = {"tools": {"listChanged": True}}
    for upstream in face.pool:
        caps = upstream.capabilities if upstream.state == "ready" else None
        if caps is None and upstream.state != "starting":
            continue
        if caps is None or "resources" in caps:
            subscribe = caps is None or bool((caps.get("resources") or {}).get("subscribe"))
            current = offered.get("resources", {"listChanged": True, "subscribe": False})
            offered["resources"] = {"listChanged": True, "subscribe": current["subscribe"] or subscribe}
        for kind, value in (("prompts", {"listChanged": True}), ("logging", {}), ("completions", {})):
            if caps is None or kind in caps:
                offered[kind] = value
    return offered


async def tools_list(d: Dispatcher, req: Request) -> Result:
    cursor = req.params.get("cursor")
    await d.face.wait_for_first_start()
    return d.face.tools_page(0 if cursor is None else decode_cursor(cursor))


async def tools_call(d: Dispatcher, req: Request) -> Result:
    name = _text_param(req, "name")
    arguments = req.params.get("arguments", {})
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise EngineInputError("params.arguments must be an object")
    meta = req.params.get("_meta")
    call = ToolCall(
        name=name,
        arguments=arguments,
        meta=meta if isinstance(meta, dict) else None,
        session=d.session.held_scope,
        progress=d.progress_sink(req),
        on_sent=d.mark_sent(req),
    )
    call.confirmer = confirmer_for(d.session, req)
    await d.face.gate.run(call)
    if call.outcome == "completed" and call.result is not None:
        return call.result
    error = call.error or SidecarError("the call ended without a result")
    if isinstance(error, UpstreamUnavailable):
        return tool_error(d.redact(error.message))
    raise error


async def resources_list(d: Dispatcher, req: Request) -> Result:
    return {"resources": [r for u in d.face.pool.ready() for r in u.listing.resources]}


async def resource_templates_list(d: Dispatcher, req: Request) -> Result:
    return {"resourceTemplates": [t for u in d.face.pool.ready() for t in u.listing.templates]}


async def by_uri(d: Dispatcher, req: Request) -> Result:
    return await d.forward(req, await d.face.upstream_for_resource(_text_param(req, "uri")))


async def prompts_list(d: Dispatcher, req: Request) -> Result:
    return {"prompts": [entry.spec for entry in d.face.catalog.prompts]}


async def prompts_get(d: Dispatcher, req: Request) -> Result:
    upstream, name = await d.face.upstream_for_prompt(_text_param(req, "name"))
    return await d.forward(req, upstream, {**req.params, "name": name})


async def completion_complete(d: Dispatcher, req: Request) -> Result:
    ref = req.params.get("ref")
    if not isinstance(ref, dict):
        raise EngineInputError("params.ref must be an object")
    if ref.get("type") == "ref/prompt" and isinstance(ref.get("name"), str):
        upstream, name = await d.face.upstream_for_prompt(ref["name"])
        return await d.forward(req, upstream, {**req.params, "ref": {**ref, "name": name}})
    if ref.get("type") == "ref/resource" and isinstance(ref.get("uri"), str):
        return await d.forward(req, await d.face.upstream_for_resource(ref["uri"]))
    raise EngineInputError("params.ref must name a prompt or a resource", code=INVALID_PARAMS)


async def logging_set_level(d: Dispatcher, req: Request) -> Result:
    level = _text_param(req, "level")
    for upstream in d.face.pool.ready():
        if "logging" in upstream.capabilities:
            conn = upstream.ready_connection()
            ident, answer = conn.start_request("logging/setLevel", {"level": level})
            answer.add_done_callback(_forget_when_done(conn, ident))
    return _EMPTY


def _forget_when_done(conn: Connection, ident: int) -> Callable[[object], None]:
    return lambda _: conn.forget(ident)


HANDLERS: dict[str, Handler] = {
    "initialize": initialize,
    "tools/list": tools_list,
    "tools/call": tools_call,
    "resources/list": resources_list,
    "resources/templates/list": resource_templates_list,
    "resources/read": by_uri,
    "resources/subscribe": by_uri,
    "resources/unsubscribe": by_uri,
    "prompts/list": prompts_list,
    "prompts/get": prompts_get,
    "completion/complete": completion_complete,
    "logging/setLevel": logging_set_level,
}
