"""Progress across engines, in memory: engines that pick the same token (and the same id)
each get only their own call's progress, under their own token (RELIABILITY rule 1)."""

from __future__ import annotations

from tests.harness import FakeServer, in_memory, text_of, tool


async def test_two_engines_with_the_same_token_and_id_get_only_their_own_progress() -> None:
    async with in_memory({"f": FakeServer([tool("work")]), "g": FakeServer([tool("work")])}) as sidecar:
        one, two = await sidecar.engine(), await sidecar.engine()
        one.call("f__work", id=1, meta={"progressToken": "t"})
        on_f = await sidecar.upstream("f").expect_call("work")
        two.call("g__work", id=1, meta={"progressToken": "t"})
        on_g = await sidecar.upstream("g").expect_call("work")
        on_f.progress(1, message="one's")
        on_g.progress(2, message="two's")
        on_f.progress(3, message="one's")
        on_f.answer("f done")
        on_g.answer("g done")
        assert text_of(await one.answer_to(1)) == "f done" and text_of(await two.answer_to(1)) == "g done"
        for engine, messages in ((one, ["one's", "one's"]), (two, ["two's"])):
            progress = [f["params"] for f in engine.notifications("notifications/progress")]
            assert [p["message"] for p in progress] == messages
            assert {p["progressToken"] for p in progress} == {"t"}


async def test_an_upstream_reporting_under_a_token_it_was_not_given_reaches_nobody() -> None:
    async with in_memory({"f": FakeServer([tool("work")])}) as sidecar:
        engine = await sidecar.engine()
        rid = engine.call("f__work", meta={"progressToken": "t"})
        call = await sidecar.upstream("f").expect_call("work")
        assert call.progress_token == 1  # so `True` and `1.0` would find it, compared loosely
        for token in ("t", 999, True, 1.0):  # the engine's own token, one never issued, look-alikes
            sidecar.upstream("f").notify("notifications/progress", {"progressToken": token, "progress": 1})
        call.progress(5)
        call.answer("done")
        await engine.answer_to(rid)
        assert [f["params"]["progress"] for f in engine.notifications("notifications/progress")] == [5]
