"""`query_result`: a JMESPath expression over a held payload, bounded in time, depth and work.

Owns the whole of one query, meant to run in a worker thread: the checks on the
expression before it is compiled (empty, too long, nested too deep) and the compile
itself, the decode of the held payload (large ones a level at a time, so no single C
call holds the interpreter lock for long), the metered evaluation
(`query_interpreter`), and the encode of the answer, refused as soon as its logical size
passes `QueryLimits.answer_bytes` (or the payload's size, if larger). Every way a query can fail ends in a QueryError whose
message names the problem. jmespath is imported only when the first query runs.
"""

from __future__ import annotations

import gc
import logging
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import msgspec

from sidecar.gate.budget.charge import text_result
from sidecar.gate.budget.query_meter import Meter, QueryError, QueryLimits
from sidecar.gate.budget.shape import open_level

__all__ = ["QueryError", "QueryLimits", "answer_query", "run_query"]

log = logging.getLogger(__name__)

DECODE_WHOLE = 1 << 20  # a payload (or part) up to this size is decoded in one call
_OPEN, _CLOSE, _QUOTES = "([{", ")]}", "'\"`"


def _nesting(expression: str) -> int:
    """How deep brackets nest in the text, outside quoted names and raw strings."""
    deepest = level = 0
    quote = ""
    escaped = False
    for char in expression:
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in _QUOTES and char != "`":
            quote = char
        elif char in _OPEN:
            level += 1
            deepest = max(deepest, level)
        elif char in _CLOSE:
            level -= 1
    return deepest


SWITCH_SECONDS = 0.0005
_usual_switch = sys.getswitchinterval()
NO_FULL_COLLECTION = 1 << 30
_pausing = threading.Lock()
_queries_running = 0
_usual_thresholds: tuple[int, ...] = gc.get_threshold()


@contextmanager
def _loop_first() -> Iterator[None]:
    """While a query runs, the event loop gets the interpreter lock back quickly.

    No full (oldest-generation) garbage collection: one over the million objects a big
    query makes holds the lock for tens of milliseconds; the young generations are still
    collected, so cycles the loop makes meanwhile are not kept. A short switch interval:
    the loop releases the lock at every read and write, and would otherwise wait up to
    5 ms to get it back each time. Both are restored when the last query ends."""
    global _queries_running, _usual_thresholds
    with _pausing:
        _queries_running += 1
        if _queries_running == 1:
            _usual_thresholds = gc.get_threshold()
            gc.set_threshold(_usual_thresholds[0], _usual_thresholds[1] if len(_usual_thresholds) > 1 else 10,
                             NO_FULL_COLLECTION)
            sys.setswitchinterval(SWITCH_SECONDS)
    try:
        yield
    finally:
        with _pausing:
            _queries_running -= 1
            if _queries_running == 0:
                sys.setswitchinterval(_usual_switch)
                gc.set_threshold(*_usual_thresholds)


def _tree_depth(tree: Any) -> int:
    """The depth of a parsed expression, walked without recursion."""
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        children = node.get("children", []) if isinstance(node, dict) else []
        stack.extend((child, level + 1) for child in children if isinstance(child, dict))
    return deepest


def compile_query(expression: str, limits: QueryLimits) -> Any:
    """The parsed tree of `expression`; QueryError names what is wrong with it."""
    import jmespath
    from jmespath import exceptions

    if not expression.strip():
        raise QueryError("the query is empty; pass a JMESPath expression such as `items[0:5]`")
    if len(expression) > limits.length:
        raise QueryError(f"the query is {len(expression):,} characters, more than the {limits.length:,} allowed")
    nesting = _nesting(expression)
    if nesting > limits.depth:
        raise QueryError(f"the query nests {nesting:,} brackets deep, more than the {limits.depth} levels allowed")
    try:
        tree = jmespath.compile(expression).parsed
    except exceptions.JMESPathError as exc:
        raise QueryError(f"not a valid JMESPath expression: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise QueryError(f"the query nests too deeply to read (more than {limits.depth} levels allowed)") from None
    except Exception as exc:  # the parser's own failure on odd text: still the query's problem
        log.debug("jmespath could not compile a query: %s", type(exc).__name__)
        raise QueryError("not a valid JMESPath expression") from None
    if _tree_depth(tree) > limits.depth:
        raise QueryError(f"the query nests deeper than {limits.depth} levels")
    return tree


def _decode(raw: bytes | msgspec.Raw, meter: Meter) -> Any:
    """The payload as Python values; a large array or object a member at a time."""
    if len(raw) <= DECODE_WHOLE:
        return msgspec.json.decode(raw)
    level = open_level(raw)
    meter.check_clock()
    if level is None:
        return msgspec.json.decode(raw)
    if isinstance(level, list):
        return [_decode(item, meter) for item in level]
    return {key: _decode(value, meter) for key, value in level.items()}


def _evaluate(payload: bytes, expression: str, limits: QueryLimits) -> tuple[Any, Meter]:
    from jmespath import exceptions

    from sidecar.gate.budget.query_interpreter import interpreter_for

    meter = Meter(limits, len(payload))
    tree = compile_query(expression, limits)
    try:
        data = _decode(payload, meter)
        return interpreter_for(meter).visit(tree, data), meter
    except QueryError:
        raise
    except RecursionError:
        raise QueryError("the query nests too deeply to evaluate") from None
    except MemoryError:
        raise QueryError("the query's answer is too large; narrow it") from None
    except exceptions.JMESPathTypeError as exc:  # its own words repr the value: never built here
        expected = ", ".join(map(str, exc.expected_types))
        raise QueryError(f"the query failed: {exc.function_name}() got {exc.actual_type}, "
                         f"expected one of: {expected}") from None
    except exceptions.JMESPathError as exc:
        raise QueryError(f"the query failed: {str(exc).splitlines()[0][:200]}") from None
    except Exception as exc:  # jmespath meeting data it does not expect
        log.debug("a query failed inside jmespath: %s", type(exc).__name__)
        raise QueryError(f"the query failed on this data ({type(exc).__name__})") from None


def run_query(payload: bytes, expression: str, limits: QueryLimits) -> Any:
    """Evaluate `expression` over the JSON `payload`; QueryError says why it could not."""
    value, meter = _evaluate(payload, expression, limits)
    meter.bounded(value, meter.answer_cap, "the answer")
    return value


def answer_query(payload: bytes, expression: str, limits: QueryLimits) -> bytes:
    """The tools/call result for the query: its answer as JSON text, or its error."""
    with _loop_first():
        return _answer(payload, expression, limits)  # every value made is gone on return


def _answer(payload: bytes, expression: str, limits: QueryLimits) -> bytes:
    try:
        value = run_query(payload, expression, limits)
        text = msgspec.json.encode(value).decode()
    except QueryError as exc:
        return msgspec.json.encode(text_result(str(exc), True))
    return msgspec.json.encode(text_result(text))
