"""The task table on its own: ids namespaced per upstream, found only by the session that
made them, bounded, rewritten in everything that comes back; the capability offered."""

from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sidecar.catalog import CatalogEntry
from sidecar.errors import EngineInputError
from sidecar.hub.tasks import RELATED_TASK, TaskTable, tasks_capability

A = CatalogEntry("a__slow", "a", "slow", {"name": "a__slow"})
B = CatalogEntry("b__slow", "b", "slow", {"name": "b__slow"})


def created(task_id: str, **more: object) -> msgspec.Raw:
    return msgspec.Raw(json.dumps({"task": {"taskId": task_id, "status": "working", **more}}).encode())


def exposed(answer: msgspec.Raw) -> str:
    return str(json.loads(bytes(answer))["task"]["taskId"])


def test_two_upstreams_with_the_same_task_id_do_not_collide() -> None:
    table, me = TaskTable(), object()
    first, second = exposed(table.adopt(me, A, created("1"))), exposed(table.adopt(me, B, created("1")))
    assert (first, second) == ("a~1", "b~1")
    assert (table.find(me, first).alias, table.find(me, second).alias) == ("a", "b")
    assert table.by_upstream("b", "1") is table.find(me, second)
    assert json.loads(bytes(table.adopt(me, A, created("2", ttl=5))))["task"] == {"taskId": "a~2", "status": "working",
                                                                                   "ttl": 5}


@given(st.one_of(st.text(max_size=30), st.integers(), st.none(), st.lists(st.integers(), max_size=2)))
def test_only_the_owner_finds_its_task_and_every_other_id_is_one_answer(forged: object) -> None:
    table, me, other = TaskTable(), object(), object()
    mine = exposed(table.adopt(me, A, created("t")))
    with pytest.raises(EngineInputError, match="unknown task"):
        table.find(other, mine)
    if forged != mine:
        with pytest.raises(EngineInputError, match="unknown task") as caught:
            table.find(me, forged)
        assert caught.value.code == -32602
    assert [r.exposed_id for r in table.of(me)] == [mine] and table.of(other) == []


def test_an_answer_that_is_not_a_task_passes_unchanged() -> None:
    table = TaskTable()
    for raw in (b'{"content":[]}', b'{"task":{"status":"working"}}', b'{"task":7}', b"[1]", b"not json"):
        assert bytes(table.adopt(object(), A, msgspec.Raw(raw))) == raw
    assert len(table) == 0


def test_the_table_is_bounded_oldest_forgotten_first() -> None:
    table, me = TaskTable(limit=3), object()
    ids = [exposed(table.adopt(me, A, created(str(i)))) for i in range(5)]
    assert len(table) == 3 and [r.exposed_id for r in table.of(me)] == ids[2:]
    assert table.by_upstream("a", "0") is None
    with pytest.raises(EngineInputError):
        table.find(me, ids[0])


def test_ids_are_rewritten_in_what_comes_back() -> None:
    table, me = TaskTable(), object()
    table.adopt(me, A, created("9"))
    assert table.outward_task("a", {"taskId": "9", "status": "completed"}) == {"taskId": "a~9", "status": "completed"}
    assert table.outward_task("b", {"taskId": "9"}) is None
    result = {"content": [], "_meta": {RELATED_TASK: {"taskId": "9"}, "x": 1}}
    assert table.outward_related("a", result) == {"content": [], "_meta": {RELATED_TASK: {"taskId": "a~9"}, "x": 1}}
    assert table.outward_related("b", result) is result and table.outward_related("a", [1]) == [1]


def test_the_capability_is_the_union_of_what_upstreams_offer_and_the_sidecar_routes() -> None:
    assert tasks_capability([{"tools": {}}, {}]) is None
    assert tasks_capability([{"tasks": {"list": {}}}, {"tasks": {"cancel": {}, "requests": {"tools": {"call": {}}},
                                                                "requests_sampling": {}}}]) == {
        "list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    assert tasks_capability([{"tasks": {"requests": {"sampling": {"createMessage": {}}}}}]) is None
