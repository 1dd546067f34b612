"""The metered JMESPath interpreter behind `query_result`.

Owns what each node and function costs. Every visit is a step and reads the clock; every
new array or object is charged its bytes; a function that makes or compares something
big (`to_string`, `join`, `contains`, `==`, `sort`, `sort_by`, ...) is charged by the
logical size of what it is given, before it runs, so no single step can outrun the
clock or the memory budget. Imported only when a query runs (jmespath with it).
"""

from __future__ import annotations

from typing import Any

from jmespath import exceptions, functions, visitor

from sidecar.gate.budget.query_meter import Meter, QueryError, dict_cost, list_cost, sorted_in_slices

__all__ = ["MeteredFunctions", "interpreter_for"]

_CONTAINERS = (list, dict)


class _MeteredFunctions(functions.Functions):  # type: ignore[misc]
    def __init__(self, meter: Meter) -> None:
        self.meter = meter

    def call_function(self, function_name: str, resolved_args: list[Any]) -> Any:
        try:
            spec = self.FUNCTION_TABLE[function_name]
        except KeyError:
            raise exceptions.UnknownFunctionError(f"Unknown function: {function_name}()") from None
        self._validate_arguments(resolved_args, spec["signature"], function_name)
        self._charge(function_name, resolved_args)
        return spec["function"](self, *resolved_args)

    def _charge(self, name: str, args: list[Any]) -> None:
        """What the function will make or walk, paid before it runs."""
        meter, cap = self.meter, self.meter.answer_cap
        if name == "to_string" and not isinstance(args[0], str):
            meter.spend(meter.bounded(args[0], cap, "to_string's answer"))
        elif name == "join":
            meter.spend(meter.bounded(args[1], cap, "join's answer") + len(args[0]) * len(args[1]))
        elif name == "contains" and isinstance(args[0], list):
            meter.step(meter.bounded(args[0], 4 * cap, "the array contains searches") // 8)
            meter.bounded(args[1], 4 * cap, "the value contains looks for")
        elif name in ("sort", "reverse", "keys", "values", "map", "sort_by", "to_array", "not_null"):
            first = args[1] if name == "map" else args[0]
            if isinstance(first, (list, dict, str)):
                meter.spend(len(first) if isinstance(first, str) else list_cost(len(first)))
        elif name == "merge":
            meter.spend(dict_cost(sum(len(a) for a in args if isinstance(a, dict))))

    @functions.signature({"types": ["array-number", "array-string"]})  # type: ignore[untyped-decorator]
    def _func_sort(self, arg: list[Any]) -> list[Any]:
        return sorted_in_slices(arg, None, self.meter)

    @functions.signature({"types": ["array"]}, {"types": ["expref"]})  # type: ignore[untyped-decorator]
    def _func_sort_by(self, array: list[Any], expref: Any) -> list[Any]:
        if not array:
            return array
        first = type(expref.visit(expref.expression, array[0])).__name__
        required = self._convert_to_jmespath_type(first)
        if required not in ("number", "string"):
            raise exceptions.JMESPathTypeError("sort_by", array[0], required, ["string", "number"])
        keyfunc = self._create_key_func(expref, [required], "sort_by")
        keys = [keyfunc(item) for item in array]
        order = sorted_in_slices(list(range(len(array))), keys.__getitem__, self.meter)
        return [array[i] for i in order]


class _Metered(visitor.TreeInterpreter):  # type: ignore[misc]
    """TreeInterpreter with a step and a clock check per visit, and new values charged."""

    def __init__(self, meter: Meter, functions: type[_MeteredFunctions]) -> None:
        super().__init__(visitor.Options(custom_functions=functions(meter)))
        self.meter = meter

    def visit(self, node: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        self.meter.step()
        node_type = node["type"]
        method = self._method_cache.get(node_type)
        if method is None:
            method = getattr(self, "visit_" + node_type, self.default_visit)
            self._method_cache[node_type] = method
        return method(node, *args, **kwargs)

    def visit_comparator(self, node: dict[str, Any], value: Any) -> Any:
        if node["value"] not in self._EQUALITY_OPS:
            return super().visit_comparator(node, value)
        left = self.visit(node["children"][0], value)
        right = self.visit(node["children"][1], value)
        if left is not right and isinstance(left, _CONTAINERS) and isinstance(right, _CONTAINERS):
            cap = 4 * self.meter.answer_cap
            smaller = min(self.meter.measure(left, cap), self.meter.measure(right, cap))
            if smaller > cap:
                raise QueryError(f"the query compares values of more than {cap // (1 << 20)} MB; narrow it")
            self.meter.step(smaller // 8)
        return self.COMPARATOR_FUNC[node["value"]](left, right)

    def visit_multi_select_list(self, node: dict[str, Any], value: Any) -> Any:
        if value is not None:
            self.meter.spend(list_cost(len(node["children"])))
        return super().visit_multi_select_list(node, value)

    def visit_multi_select_dict(self, node: dict[str, Any], value: Any) -> Any:
        if value is not None:
            self.meter.spend(dict_cost(len(node["children"])))
        return super().visit_multi_select_dict(node, value)

    def visit_flatten(self, node: dict[str, Any], value: Any) -> Any:
        base = self.visit(node["children"][0], value)
        if not isinstance(base, list):
            return None
        self.meter.spend(list_cost(sum(len(e) if isinstance(e, list) else 1 for e in base)))
        merged: list[Any] = []
        for element in base:
            if isinstance(element, list):
                merged.extend(element)
            else:
                merged.append(element)
        return merged

    def visit_slice(self, node: dict[str, Any], value: Any) -> Any:
        if isinstance(value, list):
            self.meter.spend(list_cost(len(range(len(value))[slice(*node["children"])])))
        return super().visit_slice(node, value)

    def visit_projection(self, node: dict[str, Any], value: Any) -> Any:
        collected = super().visit_projection(node, value)
        if collected is not None:
            self.meter.spend(list_cost(len(collected)))
        return collected

    def visit_value_projection(self, node: dict[str, Any], value: Any) -> Any:
        collected = super().visit_value_projection(node, value)
        if collected is not None:
            self.meter.spend(list_cost(len(collected)))
        return collected

    def visit_filter_projection(self, node: dict[str, Any], value: Any) -> Any:
        collected = super().visit_filter_projection(node, value)
        if collected is not None:
            self.meter.spend(list_cost(len(collected)))
        return collected


MeteredFunctions = _MeteredFunctions  # what a caller with functions of its own extends (argument rules)


def interpreter_for(meter: Meter, functions: type[_MeteredFunctions] = _MeteredFunctions) -> Any:
    return _Metered(meter, functions)
