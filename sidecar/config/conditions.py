"""The checks a `when` condition of `policy.rules` must pass when the config is read.

Owns what makes a condition well formed before any call: at most `MAX_LENGTH`
characters and `MAX_DEPTH` levels of nesting, valid JMESPath, every function it names
known (JMESPath's own and the sidecar's, `SIDECAR_FUNCTIONS`) and given as many
arguments as it takes, and `path_outside`'s roots written in the rule as absolute paths.
Refuses with a `ConfigError` at `policy.rules[i].when` naming the rule's tool. The gate
compiles the same conditions again with its own metered functions
(`sidecar.gate.argrules.conditions`), which must offer exactly `SIDECAR_FUNCTIONS`.
jmespath is imported only when a config has a condition.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sidecar.errors import ConfigError

__all__ = ["MAX_DEPTH", "MAX_LENGTH", "SIDECAR_FUNCTIONS", "check_conditions", "check_functions", "parse_condition"]

MAX_LENGTH = 4096
MAX_DEPTH = 40
SIDECAR_FUNCTIONS = {"path_outside": 2, "private_host": 1, "shell_level": 1}  # name -> arguments


def check_conditions(rules: Sequence[tuple[str, str | None]]) -> None:
    """`rules`: (tool, when) in the order of `policy.rules`."""
    for index, (tool, when) in enumerate(rules):
        if when is None:
            continue
        try:
            check_functions(parse_condition(when))
        except ValueError as exc:
            raise ConfigError(f"policy.rules[{index}].when", f"the rule for '{tool}': {exc}") from None


def parse_condition(expression: str) -> dict[str, Any]:
    """The parsed tree of `expression`; ValueError naming what is wrong."""
    import jmespath
    from jmespath import exceptions

    if len(expression) > MAX_LENGTH:
        raise ValueError(f"the condition is {len(expression):,} characters, more than the {MAX_LENGTH:,} allowed")
    try:
        tree: dict[str, Any] = jmespath.compile(expression).parsed
    except exceptions.JMESPathError as exc:
        raise ValueError(f"not a valid JMESPath expression: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise ValueError(f"the condition nests more than {MAX_DEPTH} levels") from None
    except Exception as exc:  # the parser's own failure on odd text
        raise ValueError(f"not a valid JMESPath expression ({type(exc).__name__})") from None
    if _depth_of_tree(tree) > MAX_DEPTH:
        raise ValueError(f"the condition nests more than {MAX_DEPTH} levels")
    return tree


def _depth_of_tree(tree: dict[str, Any]) -> int:
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in node.get("children", []) if isinstance(child, dict))
    return deepest


def check_functions(tree: dict[str, Any]) -> None:
    """Every function named in `tree` exists and gets as many arguments as it takes."""
    from jmespath.functions import Functions

    table: dict[str, Any] = Functions.FUNCTION_TABLE
    stack = [tree]
    while stack:
        node = stack.pop()
        children = [c for c in node.get("children", []) if isinstance(c, dict)]
        stack.extend(children)
        if node.get("type") != "function_expression":
            continue
        name = node["value"]
        if name in SIDECAR_FUNCTIONS:
            wanted, variadic = SIDECAR_FUNCTIONS[name], False
        elif name in table:
            signature = table[name]["signature"]
            wanted, variadic = len(signature), bool(signature) and bool(signature[-1].get("variadic"))
        else:
            raise ValueError(f"unknown function {name}()")
        if len(children) < wanted or (len(children) > wanted and not variadic):
            raise ValueError(f"{name}() takes {wanted} argument(s), not {len(children)}")
        if name == "path_outside":
            _check_roots(children[1])


def _check_roots(node: dict[str, Any]) -> None:
    """`path_outside`'s roots must be written in the rule (a list of absolute paths)."""
    if node.get("type") == "literal":
        roots = node.get("value")
    elif node.get("type") == "multi_select_list":
        roots = [c.get("value") if c.get("type") == "literal" else None for c in node.get("children", [])]
    else:
        raise ValueError("path_outside() takes its roots as a list written in the rule, e.g. ['/work']")
    if not isinstance(roots, list) or not roots:
        raise ValueError("path_outside() needs a non-empty list of roots")
    for root in roots:
        if not isinstance(root, str) or not root.startswith(("/", "~")):
            raise ValueError("path_outside() roots must be absolute paths (or start with ~)")
