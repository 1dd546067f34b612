"""An in-memory harness for the sidecar's core: engine frames in, frames out, upstreams as
scripted fakes, time under the test's control. See `tests/harness/sidecar.py`.

    async with in_memory({"f": FakeServer([tool("echo")])}) as sidecar:
        engine = await sidecar.engine()
        rid = engine.call("f__echo", {"text": "hi"})
        call = await sidecar.upstream("f").expect_call("echo")
        call.answer("hi")
        assert text_of(await engine.answer_to(rid)) == "hi"
"""

from tests.harness.engine import FakeEngine, SessionWire, text_of
from tests.harness.sidecar import InMemorySidecar, in_memory, over_real_upstreams
from tests.harness.upstream import FakeChannel, FakeServer, ScriptedCall, echo, tool

__all__ = ["FakeChannel", "FakeEngine", "FakeServer", "InMemorySidecar", "ScriptedCall", "SessionWire", "echo",
           "in_memory", "over_real_upstreams", "text_of", "tool"]
