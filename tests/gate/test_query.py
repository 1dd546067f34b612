import msgspec
import pytest

from sidecar.gate.budget.query import QueryError, QueryLimits, run_query

DATA = msgspec.json.encode({"items": [{"id": i, "state": "open" if i % 3 else "closed", "n": i} for i in range(3000)]})


def test_filter_and_projection() -> None:
    answer = run_query(DATA, "items[?state=='closed'] | [0:3].{id: id, n: n}", QueryLimits())
    assert answer == [{"id": 0, "n": 0}, {"id": 3, "n": 3}, {"id": 6, "n": 6}]
    assert run_query(DATA, "length(items)", QueryLimits()) == 3000


@pytest.mark.parametrize("expression", ["", "items[?", "items[?state=='open'"])
def test_bad_expressions_are_refused_clearly(expression: str) -> None:
    with pytest.raises(QueryError):
        run_query(DATA, expression, QueryLimits())


def test_an_exploding_query_is_stopped() -> None:
    explode = "items[*].[@,@,@,@,@,@,@,@][].[@,@,@,@,@,@,@,@][].[@,@,@,@,@,@,@,@]"
    with pytest.raises(QueryError, match="steps|longer than"):
        run_query(DATA, explode, QueryLimits(seconds=1.0, visits=200_000))


def test_depth_is_bounded() -> None:
    with pytest.raises(QueryError, match="deep"):
        run_query(DATA, "not_null(" * 30 + "items" + ")" * 30, QueryLimits(depth=10))
