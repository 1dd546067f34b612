"""Hostile rounds against a held question (issue 24, item 4): a forged, altered, replayed,
expired or foreign state, one made for other arguments, one presented to another replica;
an upstream that asks forever; an engine that never comes back. Each ends with one clear
answer, and the upstream's question is answered (with an error) rather than left waiting."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest

from sidecar.front.eras.held import MAX_QUESTIONS
from tests.cloud.cloud_support import open_redis
from tests.conftest import await_event, read_event_file
from tests.eras.eras_support import MODERN, Person, era_entry, sdk_client, sdk_wait_for_tools, stateless_call, \
    wait_for_tools
from tests.http.http_support import open_http_sidecar

pytestmark = pytest.mark.e2e

ANSWER = {"upstream": {"action": "accept", "content": {"name": "eve"}}}


def _asked(message: dict[str, Any]) -> str:
    result = message["result"]
    assert result["resultType"] == "input_required", message
    assert result["inputRequests"]["upstream"]["method"] == "elicitation/create"
    state: str = result["requestState"]
    return state


def _refusal(status: int, message: dict[str, Any]) -> str:
    """The words of a refused round: invalid params, as a 2026-07-28 server answers a
    request state it cannot honour."""
    assert message["error"]["code"] == -32602, (status, message)
    words: str = message["error"]["message"]
    return words


def _not_valid(status: int, message: dict[str, Any]) -> bool:
    return "requestState is not valid" in _refusal(status, message)


async def test_forged_altered_other_arguments_foreign_caller_and_replay_are_refused(write_config,
                                                                                     tmp_path: Path) -> None:
    config = write_config({"era": era_entry()})
    other_token = "other-token-0123456789abcdef"
    async with open_http_sidecar(config, tmp_path, log_level="INFO", more_tokens=(other_token,)) as sc, \
            aiohttp.ClientSession() as http:
        await wait_for_tools(http, sc.url, sc.token)
        call = ("era__form", {"message": "a"})
        state = _asked((await stateless_call(http, sc.url, sc.token, *call))[1])
        forged = base64.urlsafe_b64encode(os.urandom(96)).decode().rstrip("=")
        altered = state[:-3] + ("AAA" if state[-3:] != "AAA" else "BBB")
        for bad in (forged, altered, "x" * 40):
            assert _not_valid(*await stateless_call(http, sc.url, sc.token, *call, state=bad, responses=ANSWER))
        assert _not_valid(*await stateless_call(http, sc.url, sc.token, "era__form", {"message": "b"}, state=state,
                                                responses=ANSWER))
        assert _not_valid(*await stateless_call(http, sc.url, other_token, *call, state=state, responses=ANSWER))
        # none of the refusals spent the state: its own caller continues the call
        status, done = await stateless_call(http, sc.url, sc.token, *call, state=state, responses=ANSWER)
        assert status == 200 and json.loads(done["result"]["content"][0]["text"])["content"] == {"name": "eve"}
        assert _not_valid(*await stateless_call(http, sc.url, sc.token, *call, state=state, responses=ANSWER))


async def test_an_engine_that_never_comes_back_frees_the_upstream_and_its_state_expires(write_config,
                                                                                          tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    config = write_config({"era": era_entry(events)}, policy={"confirmStateSeconds": 1})
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc, aiohttp.ClientSession() as http:
        await wait_for_tools(http, sc.url, sc.token)
        state = _asked((await stateless_call(http, sc.url, sc.token, "era__form", {}))[1])
        refused = await await_event(events, lambda e: e["event"] == "refused", timeout=10)
        assert "did not answer within 1 s" in refused["message"]
        await await_event(events, lambda e: e["event"] in ("failed", "cancelled") and e["tool"] == "form", timeout=10)
        assert _not_valid(*await stateless_call(http, sc.url, sc.token, "era__form", {}, state=state,
                                                responses=ANSWER))
        # the sidecar serves on: the next call asks and answers as usual
        fresh = _asked((await stateless_call(http, sc.url, sc.token, "era__form", {}))[1])
        status, done = await stateless_call(http, sc.url, sc.token, "era__form", {}, state=fresh, responses=ANSWER)
        assert status == 200 and "eve" in done["result"]["content"][0]["text"]


async def test_an_upstream_that_asks_forever_is_stopped_after_the_bound(write_config, tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    config = write_config({"era": era_entry(events)})
    person = Person("sam")
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc:
        async with sdk_client(sc.url, sc.token, person, MODERN, input_required_max_rounds=100) as client:
            await sdk_wait_for_tools(client)
            with anyio.fail_after(60), pytest.raises(Exception) as stopped:
                await client.call_tool("era__forever", {})
    assert f"asked more than {MAX_QUESTIONS} questions" in str(stopped.value)
    assert len(person.asked) == MAX_QUESTIONS
    await await_event(events, lambda e: e["event"] == "refused", timeout=10)
    assert sum(e["event"] == "answered" for e in read_event_file(events)) == MAX_QUESTIONS


async def test_a_state_presented_to_another_replica_says_where_the_call_is(write_config, tmp_path: Path) -> None:
    """Two replicas sharing the sealing key and the record of used states (Redis): the
    state opens on the other one, which does not hold the call and says so; a replica
    with its own key refuses it as not valid."""
    key = base64.b64encode(os.urandom(32)).decode()
    async with open_redis(tmp_path) as (port, _):
        shared = write_config({"era": era_entry()}, name="shared.json", policy={"confirmKeyEnv": "ERA_KEY"},
                              store={"url": f"redis://127.0.0.1:{port}/0"})
        alone = write_config({"era": era_entry()}, name="alone.json")
        env = {"ERA_KEY": key}
        async with open_http_sidecar(shared, tmp_path, env=env, log_level="INFO") as a, \
                open_http_sidecar(shared, tmp_path, env=env, log_level="INFO") as b, \
                open_http_sidecar(alone, tmp_path, log_level="INFO") as c, aiohttp.ClientSession() as http:
            for sc in (a, b, c):
                await wait_for_tools(http, sc.url, sc.token)
            state = _asked((await stateless_call(http, a.url, a.token, "era__form", {}))[1])
            status, message = await stateless_call(http, c.url, c.token, "era__form", {}, state=state,
                                                   responses=ANSWER)
            assert _not_valid(status, message)
            status, message = await stateless_call(http, b.url, b.token, "era__form", {}, state=state,
                                                   responses=ANSWER)
            assert "affinity" in _refusal(status, message)
            # used on b, so refused on a as well (one record of used states): one answer each
            assert _not_valid(*await stateless_call(http, a.url, a.token, "era__form", {}, state=state,
                                                    responses=ANSWER))


async def test_a_stateless_round_whose_client_hangs_up_cancels_the_call(write_config, tmp_path: Path) -> None:
    """The SDK client gives up on a question (its callback never returns, the client closes):
    the sidecar's held call ends at its bound and the upstream hears of it."""
    events = tmp_path / "events.jsonl"
    config = write_config({"era": era_entry(events)}, policy={"confirmStateSeconds": 1})
    person = Person(stall=True)
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc:
        async with sdk_client(sc.url, sc.token, person, MODERN) as client:
            await sdk_wait_for_tools(client)
            with anyio.move_on_after(3):
                await client.call_tool("era__form", {})
        refused = await await_event(events, lambda e: e["event"] == "refused", timeout=10)
    assert "did not answer" in refused["message"] and len(person.asked) == 1


async def test_a_sidecar_that_stops_answers_the_held_question_first(write_config, tmp_path: Path) -> None:
    """Shutdown leaves nothing waiting: the upstream's question gets an error answer before
    the upstream itself is stopped."""
    events = tmp_path / "events.jsonl"
    config = write_config({"era": era_entry(events)})
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc, aiohttp.ClientSession() as http:
        await wait_for_tools(http, sc.url, sc.token)
        _asked((await stateless_call(http, sc.url, sc.token, "era__form", {}))[1])
    refused = [e for e in read_event_file(events) if e["event"] == "refused"]
    assert len(refused) == 1 and "shutting down" in refused[0]["message"], refused


async def test_two_held_calls_on_one_stdio_upstream_get_their_own_questions_and_answers(write_config,
                                                                                         tmp_path: Path) -> None:
    """stdio links no server request to its call: a call already waiting on its engine's
    answer is blocked there, so a new question is the other call's."""
    config = write_config({"era": era_entry()})
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc, aiohttp.ClientSession() as http:
        await wait_for_tools(http, sc.url, sc.token)
        first = (await stateless_call(http, sc.url, sc.token, "era__form", {"message": "first"}))[1]["result"]
        second = (await stateless_call(http, sc.url, sc.token, "era__form", {"message": "second"}))[1]["result"]
        assert first["inputRequests"]["upstream"]["params"]["message"] == "first"
        assert second["inputRequests"]["upstream"]["params"]["message"] == "second"
        answer = {"upstream": {"action": "accept", "content": {"name": "two"}}}
        _, done_second = await stateless_call(http, sc.url, sc.token, "era__form", {"message": "second"},
                                              state=second["requestState"], responses=answer)
        answer = {"upstream": {"action": "accept", "content": {"name": "one"}}}
        _, done_first = await stateless_call(http, sc.url, sc.token, "era__form", {"message": "first"},
                                             state=first["requestState"], responses=answer)
    assert json.loads(done_second["result"]["content"][0]["text"])["content"] == {"name": "two"}
    assert json.loads(done_first["result"]["content"][0]["text"])["content"] == {"name": "one"}


async def test_a_question_the_asking_engine_did_not_declare_is_not_queued_behind_another_call(
        write_config, tmp_path: Path) -> None:
    """One held call waits on its engine; another caller's call, whose engine declared
    sampling only, makes the same upstream ask a form. It is that call's question (the
    first is blocked on its own), so it is refused naming the capability, at once, rather
    than queued behind the first call until that one's engine comes back."""
    events = tmp_path / "events.jsonl"
    config = write_config({"era": era_entry(events)})
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc, aiohttp.ClientSession() as http:
        await wait_for_tools(http, sc.url, sc.token)
        _asked((await stateless_call(http, sc.url, sc.token, "era__form", {"message": "first"}))[1])
        with anyio.fail_after(10):
            status, message = await stateless_call(http, sc.url, sc.token, "era__form", {"message": "second"},
                                                   capabilities={"sampling": {}})
        refused = await await_event(events, lambda e: e["event"] == "refused", timeout=10)
    assert "did not declare the elicitation capability" in refused["message"]
    # the upstream ended its call with that error; the engine reads it as the upstream sent it
    assert "did not declare the elicitation capability" in json.dumps(message), (status, message)
