"""The interpreter limits of `query_result`, in process: every hostile query ends (an answer
or a QueryError naming the problem) within its time limit plus a small margin, whatever
one step costs, and within the memory budget; compile problems are named, never
"internal error"."""

from __future__ import annotations

import json
import random
import time
import tracemalloc

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sidecar.gate.budget.query import QueryError, QueryLimits, answer_query, run_query
from sidecar.gate.budget.query_meter import Meter, sorted_in_slices
from tests.gate.hostile_queries import REGRESSION, hostile

# The fault server's `records` shape, about 13 KB: the size the review used.
PAYLOAD = json.dumps([{"id": i, "name": f"rec-{i}", "tags": ["x", "y"], "nested": {"v": i}}
                      for i in range(170)]).encode()
MARGIN = 0.5  # seconds past the limit a query may take to stop (loaded 2-core CI included)
MEMORY_BUDGET = 10 * len(PAYLOAD) + (64 << 20)


def _outcome(expression: str, limits: QueryLimits, payload: bytes = PAYLOAD) -> tuple[str, float]:
    started = time.monotonic()
    try:
        run_query(payload, expression, limits)
        said = "answer"
    except QueryError as exc:
        said = str(exc)
    return said, time.monotonic() - started


@pytest.mark.parametrize("expression", REGRESSION, ids=range(len(REGRESSION)))
def test_regression_corpus_ends_in_time(expression: str) -> None:
    limits = QueryLimits(seconds=1.0)
    said, took = _outcome(expression, limits)
    assert "internal" not in said
    assert took < limits.seconds + MARGIN, f"{expression[:60]!r} took {took:.2f}s ({said[:80]})"


def test_regression_corpus_stays_within_the_memory_budget() -> None:
    """Peak Python allocations of each case, traced (the real process's RSS is measured in
    test_query_hostile_e2e.py); tracemalloc slows Python, so the clock stops most early."""
    for expression in REGRESSION:
        tracemalloc.start()
        try:
            _outcome(expression, QueryLimits(seconds=0.5))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < MEMORY_BUDGET, f"{expression[:60]!r} peaked at {peak / 2**20:.0f} MiB"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False))
def test_generated_hostile_queries_end_within_the_limit(rng: random.Random) -> None:
    expression = hostile(rng)
    limits = QueryLimits(seconds=0.5)
    said, took = _outcome(expression, limits)
    assert took < limits.seconds + MARGIN, f"{expression!r} took {took:.2f}s ({said[:80]})"
    assert "internal" not in said


def test_doubling_pipes_are_refused_at_the_answer_cap_not_encoded() -> None:
    said, took = _outcome(" | ".join(["[@,@]"] * 25), QueryLimits())
    assert said == "the answer would be more than 4 MB; narrow the query"
    assert took < 2.0


def test_expensive_visits_are_charged_by_the_bytes_they_make() -> None:
    big = msgspec.json.encode([{"text": "x" * 1000, "n": i} for i in range(1000)])  # about 1 MB
    said, _ = _outcome("[" + ",".join(["to_string(@)"] * 150) + "]", QueryLimits(), big)
    assert "makes more than" in said and "new values" in said


def test_the_clock_is_read_within_one_step() -> None:
    explode = "[*].[@,@,@,@,@,@,@,@][].[@,@,@,@,@,@,@,@][].[@,@,@,@,@,@,@,@][].[@,@,@,@][]"
    said, took = _outcome(explode, QueryLimits(seconds=0.1, new_bytes=1 << 34))
    assert said == "the query ran longer than 0.1s; narrow it"
    assert took < 0.1 + MARGIN


def test_comparing_logically_huge_values_is_refused() -> None:
    monster = "|".join(["[@,@]"] * 30)
    said, took = _outcome(f"{{a: {monster}, b: {monster}}} | a == b", QueryLimits())
    assert said.startswith("the query compares values of more than")


@pytest.mark.parametrize(("expression", "limits", "words"), [
    ("(" * 3000 + "@" + ")" * 3000, QueryLimits(), "characters, more than the 4,096 allowed"),
    ("(" * 1300 + "@" + ")" * 1300, QueryLimits(), "nests 1,300 brackets deep"),
    ("(" * 3000 + "@" + ")" * 3000, QueryLimits(depth=10**6, length=10**6), "nests too deeply to read"),
    (" | ".join(["@"] * 60), QueryLimits(), "nests deeper than 40 levels"),
    ("[::0]", QueryLimits(), "the query failed on this data"),
    ("nope(@)", QueryLimits(), "Unknown function: nope()"),
    ("   ", QueryLimits(), "the query is empty"),
])
def test_compile_and_evaluation_problems_are_named(expression: str, limits: QueryLimits, words: str) -> None:
    said, _ = _outcome(expression, limits)
    assert words in said


def test_answer_query_gives_a_tool_result_either_way() -> None:
    good = json.loads(answer_query(PAYLOAD, "[0].name", QueryLimits()))
    assert good == {"content": [{"type": "text", "text": '"rec-0"'}], "isError": False}
    bad = json.loads(answer_query(PAYLOAD, " | ".join(["[@,@]"] * 25), QueryLimits()))
    assert bad["isError"] is True and "answer would be more than" in bad["content"][0]["text"]


def test_ordinary_queries_still_answer() -> None:
    assert run_query(PAYLOAD, "sort_by(@, &name)[0:2].id", QueryLimits()) == [0, 1]
    assert run_query(PAYLOAD, "length([?nested.v > `100`])", QueryLimits()) == 69
    assert run_query(PAYLOAD, "join(',', [0:3].name)", QueryLimits()) == "rec-0,rec-1,rec-2"
    assert run_query(PAYLOAD, "contains([*].id, `7`)", QueryLimits()) is True


def test_sorting_in_slices_matches_sorted_and_is_stable() -> None:
    rng = random.Random(7)
    numbers = [rng.randrange(1000) for _ in range(100_000)]
    meter = Meter(QueryLimits(), 0)
    assert sorted_in_slices(numbers, None, meter) == sorted(numbers)
    order = sorted_in_slices(list(range(len(numbers))), numbers.__getitem__, meter)
    assert order == sorted(range(len(numbers)), key=numbers.__getitem__)


def test_a_large_payload_is_decoded_a_member_at_a_time() -> None:
    payload = msgspec.json.encode({"items": [{"n": i, "s": "y" * 50} for i in range(40_000)], "k": 1})
    assert len(payload) > 2 << 20
    assert run_query(payload, "length(items)", QueryLimits()) == 40_000
    assert run_query(payload, "items[-1].n", QueryLimits()) == 39_999


def test_the_loop_settings_are_restored_after_queries_even_overlapping() -> None:
    import gc
    import sys
    from concurrent.futures import ThreadPoolExecutor

    switch, thresholds = sys.getswitchinterval(), gc.get_threshold()
    slow = " | ".join(["[@,@]"] * 25)
    with ThreadPoolExecutor(3) as pool:
        answers = list(pool.map(lambda q: answer_query(PAYLOAD, q, QueryLimits(seconds=0.5)), [slow, "[0].id", slow]))
    assert json.loads(answers[1])["content"][0]["text"] == "0"
    assert sys.getswitchinterval() == switch and gc.get_threshold() == thresholds
