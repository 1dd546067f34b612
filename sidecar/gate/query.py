"""`query_result`: a JMESPath expression over a held payload, bounded in time, depth and work.

jmespath is imported only when the first query runs. The interpreter counts every node
it visits and checks the clock as it goes, so an exploding expression (nested
multi-selects over a large array) stops with a clear error instead of eating the process.
Runs in a worker thread so the event loop keeps serving.
"""

from __future__ import annotations

import time
from typing import Any

import msgspec

__all__ = ["QueryError", "QueryLimits", "run_query"]

CHECK_CLOCK_EVERY = 1024


class QueryError(Exception):
    """The query was refused or stopped; the message is fit for the model."""


class QueryLimits(msgspec.Struct, frozen=True):
    seconds: float = 5.0
    depth: int = 40
    visits: int = 5_000_000


def _depth(node: Any, level: int = 1) -> int:
    children = node.get("children", []) if isinstance(node, dict) else []
    deepest = level
    for child in children:
        if isinstance(child, dict):
            deepest = max(deepest, _depth(child, level + 1))
    return deepest


def _interpreter(limits: QueryLimits) -> Any:
    from jmespath import visitor

    class Bounded(visitor.TreeInterpreter):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__(visitor.Options())
            self.visits = 0
            self.deadline = time.monotonic() + limits.seconds

        def visit(self, node: Any, *args: Any, **kwargs: Any) -> Any:
            self.visits += 1
            if self.visits % CHECK_CLOCK_EVERY == 0:
                if self.visits > limits.visits:
                    raise QueryError(f"the query does more than {limits.visits:,} steps; narrow it")
                if time.monotonic() > self.deadline:
                    raise QueryError(f"the query ran longer than {limits.seconds:g}s; narrow it")
            return super().visit(node, *args, **kwargs)

    return Bounded()


def run_query(payload: bytes, expression: str, limits: QueryLimits) -> Any:
    """Evaluate `expression` over the JSON `payload`; QueryError says why it could not."""
    import jmespath
    from jmespath import exceptions

    if not expression.strip():
        raise QueryError("the query is empty; pass a JMESPath expression such as `items[0:5]`")
    try:
        parsed = jmespath.compile(expression)
    except exceptions.JMESPathError as exc:
        raise QueryError(f"not a valid JMESPath expression: {str(exc).splitlines()[0]}") from None
    if _depth(parsed.parsed) > limits.depth:
        raise QueryError(f"the query nests deeper than {limits.depth} levels")
    data = msgspec.json.decode(payload)
    try:
        return _interpreter(limits).visit(parsed.parsed, data)
    except RecursionError:
        raise QueryError("the query nests too deeply to evaluate") from None
    except exceptions.JMESPathError as exc:
        raise QueryError(f"the query failed: {str(exc).splitlines()[0]}") from None
    except MemoryError:
        raise QueryError("the query's answer is too large; narrow it") from None
