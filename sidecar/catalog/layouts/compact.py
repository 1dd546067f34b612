"""The compact listing: each tool with its description and a one-line signature of its
arguments in place of the full input schema, for engines whose window is small.

Owns the signature (`(path: string, recursive?: boolean, mode: "a"|"b")`), the listed
stand-in for a tool's schema (an empty object schema every engine accepts), and the small
checker that tells a call whose arguments do not fit the real schema: required keys,
top-level types and enums, unknown keys where the schema forbids them. A misfit is
answered with the real schema, so the model can retry in one step. The tool keeps its
own name and is called through the same gate. No I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

__all__ = ["SIGNATURE_CHARS", "compact_spec", "misfit", "misfit_answer", "signature"]

SIGNATURE_CHARS = 600  # one signature, at most; the rest is "…"
_ENUM_SHOWN = 8
_DEPTH = 2  # nested objects are spelt out this deep, then "object"
# MCP's defaults for the tool hints: a hint with its default value says nothing.
_HINT_DEFAULTS = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}
_LEFT_OUT = frozenset({"inputSchema", "description", "title", "outputSchema", "annotations", "execution"})
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "array": (list,), "object": (dict,), "null": (type(None),),
}


def _enum(values: list[Any]) -> str:
    shown = "|".join(msgspec.json.encode(v).decode() for v in values[:_ENUM_SHOWN])
    return shown + ("|…" if len(values) > _ENUM_SHOWN else "")


def _type_of(node: object, depth: int = 0) -> str:
    """One property's type as a short expression."""
    if not isinstance(node, dict):
        return "any"
    if isinstance(node.get("enum"), list) and node["enum"]:
        return _enum(node["enum"])
    if "const" in node:
        return msgspec.json.encode(node["const"]).decode()
    options = node.get("anyOf") or node.get("oneOf")
    if isinstance(options, list) and options:
        return "|".join(dict.fromkeys(_type_of(o, depth) for o in options[:4]))
    kind = node.get("type")
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind)
    if kind == "array":
        inner = _type_of(node.get("items"), depth)
        return f"({inner})[]" if "|" in inner else f"{inner}[]"
    if (kind == "object" or "properties" in node) and depth < _DEPTH and isinstance(node.get("properties"), dict):
        return "{" + _fields(node, depth + 1) + "}"
    return kind if isinstance(kind, str) else "any"


def _fields(schema: Mapping[str, Any], depth: int) -> str:
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return ""
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    return ", ".join(f"{k}{'' if k in needed else '?'}: {_type_of(v, depth)}" for k, v in properties.items())


def signature(schema: object) -> str:
    """The arguments of a tool as one line, optional ones marked `?`."""
    line = f"({_fields(schema, 0)})" if isinstance(schema, dict) else "()"
    return line if len(line) <= SIGNATURE_CHARS else line[: SIGNATURE_CHARS - 2] + "…)"


def _annotations(value: object) -> dict[str, Any] | None:
    """The hints that say something: those that differ from the spec's defaults."""
    if not isinstance(value, dict):
        return None
    kept = {k: v for k, v in value.items() if k in _HINT_DEFAULTS and v != _HINT_DEFAULTS[k]}
    return kept or None


def compact_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A tool as the compact layout lists it: its description ends with the signature,
    its listed schema is an open object, and what only a person or a result validator
    reads (title, output schema, default-valued hints and task support) is left out."""
    description = spec.get("description")
    text = description if isinstance(description, str) else ""
    arguments = f"Arguments: {signature(spec.get('inputSchema'))}"
    listed = {k: v for k, v in spec.items() if k not in _LEFT_OUT}
    listed["description"] = f"{text}\n{arguments}" if text else arguments
    listed["inputSchema"] = {"type": "object"}
    hints = _annotations(spec.get("annotations"))
    if hints:
        listed["annotations"] = hints
    execution = spec.get("execution")
    if isinstance(execution, dict) and execution.get("taskSupport", "forbidden") != "forbidden":
        listed["execution"] = execution
    return listed


def _fits_type(value: object, node: Mapping[str, Any]) -> bool:
    kind = node.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if isinstance(kind, str) else []
    known = [k for k in kinds if k in _JSON_TYPES]
    if not known:
        return True
    if isinstance(value, bool) and "boolean" not in known:
        return False  # JSON true is not a number, whatever Python says
    if isinstance(value, float) and known == ["integer"]:
        return value.is_integer()
    return any(isinstance(value, _JSON_TYPES[k]) for k in known)


def _property_misfit(key: str, value: object, node: object) -> str | None:
    if not isinstance(node, dict):
        return None
    enum = node.get("enum")
    if isinstance(enum, list) and enum and value not in enum:
        return f"'{key}' must be one of {_enum(enum)}"
    if not _fits_type(value, node):
        return f"'{key}' must be {_type_of(node)}, not {type(value).__name__}"
    return None


def misfit(schema: object, arguments: Mapping[str, Any]) -> str | None:
    """Why `arguments` do not fit the top level of `schema`, or None when they do (or
    when the schema says too little to tell)."""
    if not isinstance(schema, dict):
        return None
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = schema.get("required")
    missing = [k for k in (required if isinstance(required, list) else []) if k not in arguments]
    if missing:
        return "missing " + ", ".join(f"'{k}'" for k in missing)
    if schema.get("additionalProperties") is False:
        unknown = [k for k in arguments if k not in properties]
        if unknown:
            return "unknown " + ", ".join(f"'{k}'" for k in unknown)
    for key, value in arguments.items():
        problem = _property_misfit(key, value, properties.get(key))
        if problem:
            return problem
    return None


def misfit_answer(name: str, spec: Mapping[str, Any], arguments: Mapping[str, Any]) -> str | None:
    """The tool error for a call to a compactly listed tool whose arguments do not fit its
    real schema (the schema itself included), or None when they fit."""
    schema = spec.get("inputSchema")
    problem = misfit(schema, arguments)
    if problem is None:
        return None
    whole = msgspec.json.encode(schema).decode()
    return (f"the arguments of '{name}' do not fit its input schema: {problem}. "
            f"Call it again with arguments that fit this schema: {whole}")
