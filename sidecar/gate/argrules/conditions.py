"""`when` conditions: JMESPath over a call's arguments, checked at start, metered per call.

Owns the compile of a condition (the checks of `query_result` on length and nesting,
then those of `sidecar.config.conditions`, made already when the config was read), the
functions this room adds to JMESPath (`SIDECAR_FUNCTIONS` names them),
and one evaluation: the condition runs on the very arguments the upstream will
receive, through the metered interpreter, under `LIMITS` shared by every condition of
one call. JMESPath's truth decides (false, null, "", [] and {} are false); a function
given an argument the call does not have (null) makes the condition false. A condition
that fails on the data otherwise (a list where text was expected) or runs out of its
bound says so with `ConditionError`, and the rule decides what that means.
"""

from __future__ import annotations

import logging
from typing import Any

from jmespath import exceptions, functions

from sidecar.config.conditions import check_functions
from sidecar.gate.argrules.places import host_is_private, path_outside
from sidecar.gate.argrules.rating import Rating
from sidecar.gate.argrules.shell_risk import rate_argv, rate_command
from sidecar.gate.budget.query import compile_query
from sidecar.gate.budget.query_interpreter import MeteredFunctions, interpreter_for
from sidecar.gate.budget.query_meter import Meter, QueryError, QueryLimits

__all__ = ["Condition", "ConditionError", "Judging", "LIMITS", "compile_condition", "new_meter"]

log = logging.getLogger(__name__)

# What every condition of one call may spend together: a call is judged in well under
# this on the event loop, or it is refused.
LIMITS = QueryLimits(seconds=0.25, depth=40, visits=200_000, length=4096, new_bytes=8 << 20, answer_bytes=1 << 20)


class ConditionError(Exception):
    """A condition could not be decided on this call's arguments; the words say why."""

    def __init__(self, message: str, over_bound: bool) -> None:
        super().__init__(message)
        self.over_bound = over_bound  # the meter stopped it (else: the data did not fit)


class Judging(Meter):
    """The meter of one call's conditions, with the interpreter they share and the shell
    ratings already made (a command rated once per call, however many rules ask)."""

    def __init__(self) -> None:
        super().__init__(LIMITS, 0)
        self.interpreter: Any = None
        self.ratings: dict[str, Rating] = {}

    def rate(self, command: str) -> Rating:
        rating = self.ratings.get(command)
        if rating is None:
            self.step(1 + len(command) // 64)
            rating = self.ratings[command] = rate_command(command)
        return rating


class ArgumentFunctions(MeteredFunctions):
    """JMESPath's functions, metered, and three of this room's."""

    meter: Judging

    @functions.signature({"types": []}, {"types": ["array"]})  # type: ignore[untyped-decorator]
    def _func_path_outside(self, path: Any, roots: list[Any]) -> bool:
        if path is None:
            return False
        if not isinstance(path, str):
            return True  # a path the upstream would read some other way: outside
        self.meter.step(len(roots) + len(path) // 256)
        written = [r for r in roots if isinstance(r, str)]
        return path_outside(path, written, written[0] if written else None)  # relative: from the first root

    @functions.signature({"types": []})  # type: ignore[untyped-decorator]
    def _func_private_host(self, url: Any) -> bool:
        if url is None:
            return False
        self.meter.step(1 + (len(url) // 256 if isinstance(url, str) else 0))
        return host_is_private(url)

    @functions.signature({"types": []})  # type: ignore[untyped-decorator]
    def _func_shell_level(self, command: Any) -> str | None:
        if command is None:
            return None
        if isinstance(command, list) and all(isinstance(part, str) for part in command):
            self.meter.step(1 + len(command))
            return rate_argv(command).level
        return self.meter.rate(command).level if isinstance(command, str) else "review"


class Condition:
    """One compiled `when`."""

    def __init__(self, expression: str, tree: dict[str, Any]) -> None:
        self.expression = expression
        self.tree = tree

    def holds(self, arguments: dict[str, Any], meter: Judging) -> bool:
        if meter.interpreter is None:
            meter.interpreter = interpreter_for(meter, ArgumentFunctions)
        try:
            value = meter.interpreter.visit(self.tree, arguments)
        except QueryError as exc:
            raise ConditionError(str(exc), True) from None
        except RecursionError:
            raise ConditionError("the arguments nest too deeply to read", True) from None
        except MemoryError:
            raise ConditionError("the condition makes too large a value", True) from None
        except exceptions.JMESPathTypeError as exc:
            if exc.actual_type == "null":  # an argument the call does not have: nothing to judge
                return False
            raise ConditionError(f"{exc.function_name}() got {exc.actual_type}", False) from None
        except Exception as exc:  # jmespath meeting data it does not expect: a decision all the same
            log.debug("a condition failed inside jmespath: %s", type(exc).__name__)
            raise ConditionError(f"the condition failed on these arguments ({type(exc).__name__})", False) from None
        return _truthy(value)


def _truthy(value: Any) -> bool:
    return not (value is None or value is False or value == "" or value == [] or value == {})


def new_meter() -> Judging:
    return Judging()


def compile_condition(expression: str) -> Condition:
    """The compiled condition; ValueError with words naming what is wrong."""
    try:
        tree = compile_query(expression, LIMITS)
    except QueryError as exc:
        raise ValueError(str(exc).replace("query", "condition")) from None
    check_functions(tree)  # the same check the config made when it was read
    return Condition(expression, tree)
