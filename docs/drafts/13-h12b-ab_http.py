"""A/B in one process, rounds interleaved: a stateless request's per-request session life
(HttpSession + begin + take + answer + end + close; the gate stubbed to complete at once).
Before = sessions.py and dispatcher.py of the tree in $BASE, loaded beside the installed ones.
Run: git archive <before> sidecar | tar -x -C $BASE; BASE=$BASE .venv/bin/python this-file"""
import asyncio, importlib.util, os, sys, time, types
import msgspec
import sidecar.front.http.sessions as new_sessions
from sidecar.redact import Redactor
from sidecar.wire import decode_engine_frame

def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod); return mod
base_dispatcher = load("base_dispatcher", os.environ["BASE"] + "/sidecar/front/dispatcher.py")
base_sessions = load("base_sessions", os.environ["BASE"] + "/sidecar/front/http/sessions.py")
base_sessions.Dispatcher = base_dispatcher.Dispatcher

RAW = msgspec.Raw(b'{"content":[{"type":"text","text":"ok"}]}')
class Gate:
    answers = None
    held = types.SimpleNamespace(drop_session=lambda s: None)
    async def run(self, call):
        call.on_sent(None, 1)
        call.complete(RAW)
face = types.SimpleNamespace(tracer=None, gate=Gate(), sessions=[])
red = Redactor()
req = decode_engine_frame(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}')

async def one(mod):
    s = mod.HttpSession(face, red)
    s.engine.announced = True
    ex = s.begin([req.id], [None])
    s.dispatcher.take(req)
    await ex.frames.get()
    s.end(ex)
    await s.close()

async def rounds(mod, n=2000):
    t = time.perf_counter()
    for _ in range(n):
        await one(mod)
    return (time.perf_counter() - t) / n * 1e6

async def main():
    for label, a_fn, b_fn in (("stateless session life", lambda: rounds(base_sessions), lambda: rounds(new_sessions)),):
        a, b = [], []
        for _ in range(30):
            a.append(await a_fn()); b.append(await b_fn())
        a.sort(); b.sort()
        ma, mb = a[len(a)//2], b[len(b)//2]
        print(f"{label}: before median {ma:.2f} us (min {a[0]:.2f}), after median {mb:.2f} us (min {b[0]:.2f}), after/before {mb/ma:.2f}")
asyncio.run(main())
