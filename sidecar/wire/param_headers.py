"""The `x-mcp-header` annotations of a URL server's tools, and the `Mcp-Param-*` headers they ask for.

Owns, with no sockets here: whether a tool's annotations are valid (2026-07-28, SEP-2243:
each a non-empty header-name token, on a `string`, `integer` or `boolean` property, no
two equal ignoring case), the map from a valid tool to its annotated properties, and the
headers a `tools/call` carries for them (a value as its JSON text, a string through the
same plain-or-base64 rule as `Mcp-Name`; a missing or null value has no header). A tool
whose annotations are invalid is left out of the catalog (`sidecar.catalog.merge`), and
its calls carry no `Mcp-Param-*` header.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any


__all__ = ["ANNOTATION", "ANNOTATION_BYTES", "PREFIX", "ParamHeaders", "annotation_problem", "header_value", "param_headers"]

ANNOTATION = "x-mcp-header"
ANNOTATION_BYTES = ANNOTATION.encode()
PREFIX = "Mcp-Param-"
# RFC 9110 token characters: a header name can hold nothing else (no space, colon,
# control character or non-ASCII letter).
_TOKEN = re.compile(r"[A-Za-z0-9!#$%&'*+\-.^_`|~]+")  # whole-string: `fullmatch` (a `$` would let a final newline by)
_PRIMITIVE = frozenset({"string", "integer", "boolean"})
_PLAIN = re.compile(r"^[\x20-\x7e]*$")
_SENTINEL = "=?base64?"


def header_value(value: str) -> str:
    """A value as a 2026-07-28 header carries it: plain when safe, else base64 in a sentinel
    (non-ASCII, a control character, leading or trailing space, or a plain value that
    would read as the sentinel)."""
    if _PLAIN.match(value) and value == value.strip() and not value.startswith(_SENTINEL):
        return value
    import base64  # only a value that is not plain: off the start path

    return f"{_SENTINEL}{base64.b64encode(value.encode()).decode()}?="


def _annotated(tool: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """(property, annotation, schema) for each property that carries the annotation."""
    schema = tool.get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return []
    return [(name, prop[ANNOTATION], prop) for name, prop in properties.items()
            if isinstance(prop, dict) and ANNOTATION in prop]


def annotation_problem(tool: Mapping[str, Any]) -> str | None:
    """Why the tool's `x-mcp-header` annotations are invalid, or None when they are fine."""
    seen: dict[str, str] = {}
    for name, header, prop in _annotated(tool):
        if not isinstance(header, str) or not header:
            return f"property '{name}' has an empty or non-text {ANNOTATION}"
        if not _TOKEN.fullmatch(header):
            return f"property '{name}' names header {header!r}, not a valid header name"
        if prop.get("type") not in _PRIMITIVE:
            return f"property '{name}' is of type {prop.get('type')!r}; {ANNOTATION} is for string, integer, boolean"
        twin = seen.get(header.lower())
        if twin is not None:
            return f"properties '{twin}' and '{name}' both name header {header!r}"
        seen[header.lower()] = name
    return None


def _text(value: Any) -> str | None:
    """A value as header text: booleans as `true`/`false`, numbers as JSON writes them."""
    if value is None or isinstance(value, (dict, list)):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value) if isinstance(value, float) else str(value)
    return header_value(value) if isinstance(value, str) else None


def param_headers(annotated: Mapping[str, str], arguments: Any) -> dict[str, str]:
    """The `Mcp-Param-*` headers of a call: one per annotated property present and not null."""
    if not isinstance(arguments, dict):
        return {}
    headers: dict[str, str] = {}
    for name, header in annotated.items():
        text = _text(arguments.get(name))
        if text is not None:
            headers[PREFIX + header] = text
    return headers


class ParamHeaders:
    """A URL server's valid annotated tools (tool name -> property -> header), from its listing."""

    __slots__ = ("by_tool",)

    def __init__(self) -> None:
        self.by_tool: dict[str, dict[str, str]] = {}

    def learn(self, tools: Iterable[Mapping[str, Any]]) -> list[tuple[str, str]]:
        """Take a fresh tool listing; returns (tool, why) for each tool left out as invalid."""
        by_tool: dict[str, dict[str, str]] = {}
        invalid: list[tuple[str, str]] = []
        for tool in tools:
            name = tool.get("name")
            annotated = _annotated(tool)
            if not isinstance(name, str) or not annotated:
                continue
            problem = annotation_problem(tool)
            if problem is not None:
                invalid.append((name, problem))
            else:
                by_tool[name] = {prop: header for prop, header, _ in annotated}
        self.by_tool = by_tool
        return invalid

    def for_call(self, params: Any) -> dict[str, str]:
        """The headers of a `tools/call` with these params, as the connection decoded them
        (none for a tool not annotated)."""
        if not self.by_tool or not isinstance(params, dict):
            return {}
        name = params.get("name")
        annotated = self.by_tool.get(name) if isinstance(name, str) else None
        return param_headers(annotated, params.get("arguments")) if annotated else {}
