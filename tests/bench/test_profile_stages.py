"""`python -m bench.profile_calls --stages`: every function a pass-through `tools/call`
runs is summed into the stage of the call's way it belongs to, in the flow's order."""

from __future__ import annotations

from bench.profile_calls import STAGES, by_stage, stage_of


def test_each_part_of_a_calls_way_has_its_stage() -> None:
    expected = {
        "sidecar/front/stdio.py:data_received": "read and split lines (both pipes)",
        "sidecar/upstream/stdio.py:data_received": "read and split lines (both pipes)",
        "sidecar/wire/framing.py:feed": "read and split lines (both pipes)",
        "sidecar/wire/jsonrpc.py:_envelope": "engine envelope decode (and depth scans)",
        "sidecar/wire/depth.py:too_deep": "engine envelope decode (and depth scans)",
        "/usr/lib/python3.11/_weakrefset.py:add": "dispatcher (params typed, task, answer)",
        "sidecar/concurrency.py:spawn": "dispatcher (params typed, task, answer)",
        "sidecar/front/methods.py:tools_call": "tools/call method",
        "sidecar/gate/route.py:route_upstream": "route upstream",
        "sidecar/gate/chain.py:start": "route upstream",
        "sidecar/upstream/supervisor.py:ready_connection": "route upstream",
        "sidecar/gate/chain.py:run": "gate chain stages and record",
        "sidecar/upstream/connection.py:start_request": "upstream request encode and write",
        "sidecar/upstream/stdio.py:send": "upstream request encode and write",
        "sidecar/upstream/connection.py:_answer": "upstream answer decode and match",
        "sidecar/upstream/supervisor.py:feed": "upstream answer decode and match",
        "sidecar/wire/jsonrpc.py:encode_result": "answer encode and write (and the outboxes)",
        "sidecar/wire/outbox.py:flush": "answer encode and write (and the outboxes)",
        "sidecar/trust/first_sight.py:tick": "other",
    }
    assert {key: stage_of(key) for key in expected} == expected


def test_counts_by_stage_keep_the_total() -> None:
    counts = {"sidecar/gate/route.py:route_upstream": 73.0, "sidecar/wire/framing.py:feed": 52.0,
              "sidecar/gate/chain.py:run": 40.0, "sidecar/gate/chain.py:bound": 14.0}
    staged = by_stage(counts)
    assert sum(staged.values()) == sum(counts.values()) and staged["gate chain stages and record"] == 54.0
    assert set(staged) <= {stage for stage, _ in STAGES} | {"other"}
