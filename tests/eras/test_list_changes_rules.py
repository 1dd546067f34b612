"""The pure rules behind list changes and URL completions across eras, without sockets:
the listen filter the sidecar asks of a 2026-07-28 server, the re-list bound, the
watched URIs counted by holder, a listen request's asked URIs, and which session a URL
elicitation's completion goes to (bounded memory)."""

from __future__ import annotations

import asyncio

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from sidecar.front.eras.listen_resources import MAX_URIS, asked_uris
from sidecar.hub.session import EngineSession
from sidecar.hub.url_elicitations import LIMIT, UrlElicitations
from sidecar.upstream.listening import RELIST_SECONDS, WatchedUris, listen_filter, relist_seconds


def test_the_filter_asks_for_each_kind_the_server_flags_and_nothing_else() -> None:
    caps = {"tools": {"listChanged": True}, "prompts": {"listChanged": False}, "resources": {"subscribe": True},
            "logging": {}}
    assert listen_filter(caps) == {"toolsListChanged": True}
    assert listen_filter({"tools": {}, "prompts": {"listChanged": "yes"}}) == {}


def test_the_re_list_bound_is_a_positive_number_or_the_default() -> None:
    assert relist_seconds({"OMB_RELIST_SECONDS": "0.3"}) == 0.3
    for bad in ("", "0", "-5", "soon", "nan", "inf"):
        assert relist_seconds({"OMB_RELIST_SECONDS": bad}) == RELIST_SECONDS
    assert relist_seconds({}) == RELIST_SECONDS


@given(st.lists(st.tuples(st.booleans(), st.sampled_from(["a", "b", "c"])), max_size=40))
def test_watched_uris_are_counted_by_holder(steps: list[tuple[bool, str]]) -> None:
    async def run() -> None:
        watched, held = WatchedUris(), {"a": 0, "b": 0, "c": 0}
        for adding, uri in steps:
            before = watched.uris
            watched.changed.clear()
            if adding:
                watched.add(uri)
                held[uri] += 1
            else:
                watched.discard(uri)
                held[uri] = max(0, held[uri] - 1)
            assert watched.uris == sorted(u for u, n in held.items() if n)
            assert watched.changed.is_set() == (watched.uris != before)  # a new filter only when the set changed

    asyncio.run(run())


def test_a_listen_request_asks_strings_once_and_at_most_the_cap() -> None:
    assert asked_uris({"resourceSubscriptions": ["a", 3, "a", None, "b"]}) == ["a", "b"]
    assert asked_uris({"resourceSubscriptions": "a"}) == [] and asked_uris(None) == []
    assert len(asked_uris({"resourceSubscriptions": [f"u{i}" for i in range(200)]})) == MAX_URIS


def _url(ident: str, mode: str = "url") -> msgspec.Raw:
    return msgspec.Raw(msgspec.json.encode({"mode": mode, "url": "https://x", "message": "m", "elicitationId": ident}))


def _done(ident: object) -> msgspec.Raw:
    return msgspec.Raw(msgspec.json.encode({"elicitationId": ident}))


def test_a_completion_goes_to_the_session_asked_once_and_never_elsewhere() -> None:
    asked, other = EngineSession(emit=lambda e: None), EngineSession(emit=lambda e: None)
    table = UrlElicitations()
    table.asked("up", _url("e1"), asked)
    table.asked("up", _url("f1", mode="form"), other)  # a form question has no completion
    table.asked("up", msgspec.Raw(b"not json"), other)
    found = table.completed("up", _done("e1"))
    assert found is not None and found[0] is asked and found[1] == {"elicitationId": "e1"}
    assert table.completed("up", _done("e1")) is None  # once
    assert table.completed("other", _done("e1")) is None and table.completed("up", _done("f1")) is None
    assert table.completed("up", _done(7)) is None and table.completed("up", None) is None


def test_remembered_questions_are_bounded() -> None:
    session = EngineSession(emit=lambda e: None)
    table = UrlElicitations()
    for n in range(LIMIT + 10):
        table.asked("up", _url(f"e{n}"), session)
    assert table.completed("up", _done("e0")) is None  # the oldest forgotten
    assert table.completed("up", _done(f"e{LIMIT + 9}")) is not None
