"""Shaping: what the model sees of a JSON payload too big to show whole.

Pure functions. The view names the payload's shape (keys, array lengths, the keys of
array items), shows the first records that fit the budget, and carries the handle the
model passes to `query_result`. The view never exceeds the budget it is given.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["shape_of", "main_records", "shaped_view", "cut_text"]

MAX_KEYS = 40
MAX_DEPTH = 3
ITEMS_SAMPLED = 25
_encode = msgspec.json.encode


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "null" if value is None else "string"


def shape_of(value: Any, depth: int = 0) -> Any:
    """A small description of `value`: object keys with their shapes, array lengths and item keys."""
    kind = _kind(value)
    if kind == "object":
        if depth >= MAX_DEPTH:
            return {"object": f"{len(value)} keys"}
        keys = list(value)[:MAX_KEYS]
        shape: dict[str, Any] = {k: shape_of(value[k], depth + 1) for k in keys}
        if len(value) > MAX_KEYS:
            shape["…"] = f"{len(value) - MAX_KEYS} more keys"
        return shape
    if kind == "array":
        described: dict[str, Any] = {"array": len(value)}
        sample = value[:ITEMS_SAMPLED]
        objects = [item for item in sample if isinstance(item, dict)]
        if objects:
            item_keys: dict[str, None] = {}
            for item in objects:
                item_keys.update(dict.fromkeys(item))
            described["itemKeys"] = list(item_keys)[:MAX_KEYS]
        elif sample:
            described["items"] = _kind(sample[0])
        return described
    return kind


def main_records(value: Any) -> tuple[str, list[Any]]:
    """The array most worth showing the start of: the payload itself, or its largest array."""
    if isinstance(value, list):
        return "@", value
    best: tuple[str, list[Any]] = ("", [])
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, list) and len(item) > len(best[1]):
                best = (key, item)
            elif isinstance(item, dict):
                for inner, deeper in item.items():
                    if isinstance(deeper, list) and len(deeper) > len(best[1]):
                        best = (f"{key}.{inner}", deeper)
    return best


def shaped_view(value: Any, handle: str, size: int, budget: int) -> str:
    """The text the model gets instead of the payload; at most `budget` characters."""
    path, records = main_records(value)
    view: dict[str, Any] = {
        "note": (
            f"This result is {size:,} characters, more than the {budget:,} shown at once. "
            "It is held whole: call query_result with this handle and a JMESPath query to read it."
        ),
        "handle": handle,
        "shape": shape_of(value),
    }
    if records:
        view["records"] = {"path": path, "total": len(records), "first": []}
    text = _encode(view).decode()
    if len(text) > budget:
        view["shape"] = {"object": f"{len(value)} keys"} if isinstance(value, dict) else _kind(value)
        text = _encode(view).decode()
    if not records:
        return text[:budget]
    return _add_records(view, records, budget, text)


def _add_records(view: dict[str, Any], records: list[Any], budget: int, text: str) -> str:
    shown: list[Any] = view["records"]["first"]
    room = budget - len(text)
    for record in records:
        encoded = len(_encode(record)) + 1
        if encoded > room:
            break
        shown.append(record)
        room -= encoded
    return _encode(view).decode()


def cut_text(text: str, budget: int) -> str:
    """Head and tail of `text` within `budget`, with a marker saying how much was left out."""
    if len(text) <= budget:
        return text
    marker_room = 80
    keep = max(0, budget - marker_room)
    head = keep * 3 // 4
    tail = keep - head
    left_out = len(text) - head - tail
    marker = f"\n[… {left_out:,} characters left out by the sidecar's result budget …]\n"
    return text[:head] + marker + (text[-tail:] if tail else "")
