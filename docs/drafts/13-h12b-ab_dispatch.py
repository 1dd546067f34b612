"""A/B in one process, rounds interleaved: CPU per tools/call through Dispatcher.take +
tools_call (gate stubbed: it calls on_sent and completes at once). A = the code before
(copied here), B = the code in the tree."""
import sys, time, types
import msgspec
import sidecar.front.methods as methods
from sidecar.front.dispatcher import Dispatcher
from sidecar.front.confirming import confirmer_for
from sidecar.gate import ToolCall
from sidecar.gate.answer import call_answer
from sidecar.errors import EngineInputError
from sidecar.hub.session import EngineSession
from sidecar.wire import decode_engine_frame

def text_param(req, key):
    value = req.params.get(key)
    if not isinstance(value, str):
        raise EngineInputError(f"params.{key} must be a string")
    return value

def old_progress_sink(self, req):
    meta = req.params.get("_meta")
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    if type(token) not in (int, str):
        return None
    session = self.session
    scrub = self.face.gate.answers
    def relay(params):
        if req.id in session.in_flight:
            session.notify("notifications/progress", {**(scrub.clean(params) if scrub else params), "progressToken": token})
    return relay

def old_mark_sent(self, req):
    def sent(conn, upstream_id):
        if req.id in self.session.in_flight:
            self.session.in_flight[req.id] = (conn, upstream_id)
    return sent

async def old_tools_call(d, req):
    name = text_param(req, "name")
    arguments = req.params.get("arguments", {})
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise EngineInputError("params.arguments must be an object")
    meta = req.params.get("_meta")
    call = ToolCall(name=name, arguments=arguments, meta=meta if isinstance(meta, dict) else None,
                    session=d.session.held_scope, progress=d.progress_sink(req), on_sent=d.mark_sent(req))
    call.confirmer = confirmer_for(d.session, req)
    await d.face.gate.run(call)
    return call_answer(call, d.redact)

RAW = msgspec.Raw(b'{"content":[{"type":"text","text":"ok"}]}')
class Gate:
    answers = None
    async def run(self, call):
        call.on_sent(None, 1)
        call.complete(RAW)

def spawn(coro):
    try:
        coro.send(None)
    except StopIteration:
        pass

face = types.SimpleNamespace(tracer=None, gate=Gate())
out = []
session = EngineSession(emit=out.append)
session.announced = True
new_methods = dict(methods.METHODS)
old_methods = {**new_methods, "tools/call": old_tools_call}
new_ps, new_ms = Dispatcher.progress_sink, Dispatcher.mark_sent

def frames(progress):
    fs = []
    for i in range(2000):
        params = {"name": "echo", "arguments": {"x": 1}}
        if progress:
            params["_meta"] = {"progressToken": i}
        fs.append(decode_engine_frame(msgspec.json.encode({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})))
    return fs

def round_(old, fs):
    Dispatcher.progress_sink = old_progress_sink if old else new_ps
    Dispatcher.mark_sent = old_mark_sent if old else new_ms
    d = Dispatcher(face, session, spawn, methods=old_methods if old else new_methods)
    out.clear()
    t = time.perf_counter()
    for f in fs:
        d.take(f)
    dt = (time.perf_counter() - t) / len(fs) * 1e6
    assert len(out) == len(fs)
    return dt

for progress in (False, True):
    fs = frames(progress)
    a, b = [], []
    for _ in range(40):
        a.append(round_(True, fs)); b.append(round_(False, fs))
    a.sort(); b.sort()
    ma, mb = a[len(a)//2], b[len(b)//2]
    print(f"progress token {progress!s:5}: before median {ma:.2f} us (min {a[0]:.2f}), after median {mb:.2f} us (min {b[0]:.2f}), after/before {mb/ma:.2f}")
