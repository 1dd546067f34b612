"""Catalog text is untrusted: control and invisible characters are stripped, and counted.

Kept: tab, newline and carriage return (descriptions use them). Stripped: the other C0
and C1 controls, DEL, and the invisible format characters (zero-width, bidi overrides,
word joiners, BOM, interlinear annotations, tag characters). Dictionary keys are left
alone, as they name schema properties the upstream will expect back.

One tool's size is capped too (`cap_tool`): a 5 MB description would otherwise pass
whole into every full layout.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

__all__ = ["ToolCaps", "cap_tool", "cut_marker", "strip_invisible", "might_hold_invisible"]

_INVISIBLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)
# msgspec writes every string raw except `"`, a backslash and the C0 controls, which it
# escapes (backslash-b, -f, -n, -r, -t, -u00XX). So in text msgspec encoded, an invisible
# character is one of those escapes, a raw DEL, or a raw non-ASCII character.
_ESCAPED_CONTROLS = (b"\\u00", b"\\b", b"\\f")


def might_hold_invisible(json_text: bytes) -> bool:
    """A fast pre-check on JSON that msgspec encoded; False means `strip_invisible` would
    change nothing. False positives (an escaped backslash before a `b`) only cost a walk."""
    if b"\x7f" in json_text:  # single bytes are found at memchr speed; escapes need a backslash
        return True
    if b"\\" in json_text and any(escape in json_text for escape in _ESCAPED_CONTROLS):
        return True
    if json_text.isascii():
        return False
    return _INVISIBLE.search(json_text.decode("utf-8", "replace")) is not None


def strip_invisible(value: Any) -> tuple[Any, int]:
    """Return `value` with invisible characters removed from every string value, and a count."""
    if isinstance(value, str):
        cleaned, count = _INVISIBLE.subn("", value)
        return cleaned, count
    if isinstance(value, dict):
        total = 0
        out: dict[str, Any] = {}
        for key, item in value.items():
            out[key], count = strip_invisible(item)
            total += count
        return out, total
    if isinstance(value, list):
        total = 0
        items: list[Any] = []
        for item in value:
            cleaned_item, count = strip_invisible(item)
            items.append(cleaned_item)
            total += count
        return items, total
    return value, 0


class ToolCaps(msgspec.Struct, frozen=True):
    """How big one tool may be: its description (and title) in characters, each schema
    and any other field encoded, in bytes. Config: `budgets.toolDescriptionChars` and
    `budgets.toolSchemaBytes`."""

    description_chars: int = 64 * 1024
    schema_bytes: int = 64 * 1024


def cut_marker(size: int, cap: int) -> str:
    return f" [… cut by the sidecar: {size} characters, over its limit of {cap}]"


def _cut_text(text: str, cap: int) -> str:
    return text[:cap] + cut_marker(len(text), cap)


def _smaller_schema(schema: Any, size: int, cap: int) -> dict[str, Any]:
    """A still-valid stand-in for an input schema over the cap: the same top-level
    argument names, each accepting any value, if that fits; else any object."""
    note = f"The tool's schema ({size} bytes) is over the sidecar's limit of {cap} bytes; argument types are not shown."
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if isinstance(properties, dict):
        required = [r for r in schema.get("required", []) if isinstance(r, str) and r in properties]
        stand_in = {"type": "object", "description": note, "properties": {str(k): {} for k in properties}, "required": required}
        if len(msgspec.json.encode(stand_in)) <= cap:
            return stand_in
    return {"type": "object", "description": note}


def cap_tool(tool: dict[str, Any], caps: ToolCaps) -> tuple[dict[str, Any], bool]:
    """The tool within `caps`, and whether anything was cut.

    Over its cap, a description or title is cut with a marker that says so; an input
    schema is replaced by `_smaller_schema`; an output schema is left out (a result is
    then not checked against one, which is valid MCP); any other field over the schema
    cap (annotations, `_meta`) is left out. The name is never touched."""
    out: dict[str, Any] | None = None
    for key, value in tool.items():
        if key == "name":
            continue
        if isinstance(value, str):
            if key in ("description", "title") and len(value) > caps.description_chars:
                out = out if out is not None else dict(tool)
                out[key] = _cut_text(value, caps.description_chars)
            continue
        size = len(msgspec.json.encode(value)) if isinstance(value, (dict, list)) else 0
        if size <= caps.schema_bytes:
            continue
        out = out if out is not None else dict(tool)
        if key == "inputSchema":
            out[key] = _smaller_schema(value, size, caps.schema_bytes)
        else:
            del out[key]
    return (tool, False) if out is None else (out, True)
