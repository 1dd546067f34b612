"""Shaping: what the model sees of a JSON payload too big to show whole.

Pure functions over the payload's bytes, read lazily: one level at a time is opened with
`msgspec.Raw` values (views into the bytes, not Python objects), so shaping a 20 MB
array costs a list of views, not a tree of dicts. The view names the payload's shape
(keys, array lengths, the keys of array items), shows the first records that fit the
budget, and carries the handle the model passes to `query_result`. The view never
exceeds the budget it is given.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["shape_of", "main_records", "shaped_view", "cut_text", "open_level"]

MAX_KEYS = 40
MAX_DEPTH = 3
ITEMS_SAMPLED = 25
_encode = msgspec.json.encode
_one_level = msgspec.json.Decoder(list[msgspec.Raw] | dict[str, msgspec.Raw])
_SCALAR_KINDS = {ord('"'): "string", ord("t"): "boolean", ord("f"): "boolean", ord("n"): "null"}

Level = list[msgspec.Raw] | dict[str, msgspec.Raw]


def _kind(raw: msgspec.Raw | bytes) -> str:
    data = bytes(raw).lstrip()[:1]
    if data == b"{":
        return "object"
    if data == b"[":
        return "array"
    return _SCALAR_KINDS.get(data[0], "number") if data else "null"


def open_level(raw: msgspec.Raw | bytes) -> Level | None:
    """One level of an object or array, its values left as views; None for a scalar."""
    if _kind(raw) not in ("object", "array"):
        return None
    level: Level = _one_level.decode(raw)
    return level


def shape_of(raw: msgspec.Raw | bytes, depth: int = 0) -> Any:
    """A small description: object keys with their shapes, array lengths and item keys."""
    level = open_level(raw)
    if isinstance(level, dict):
        if depth >= MAX_DEPTH:
            return {"object": f"{len(level)} keys"}
        keys = list(level)[:MAX_KEYS]
        shape: dict[str, Any] = {k: shape_of(level[k], depth + 1) for k in keys}
        if len(level) > MAX_KEYS:
            shape["…"] = f"{len(level) - MAX_KEYS} more keys"
        return shape
    if isinstance(level, list):
        return _array_shape(level)
    return _kind(raw)


def _array_shape(items: list[msgspec.Raw]) -> dict[str, Any]:
    described: dict[str, Any] = {"array": len(items)}
    item_keys: dict[str, None] = {}
    for item in items[:ITEMS_SAMPLED]:
        opened = open_level(item)
        if isinstance(opened, dict):
            item_keys.update(dict.fromkeys(opened))
    if item_keys:
        described["itemKeys"] = list(item_keys)[:MAX_KEYS]
    elif items:
        described["items"] = _kind(items[0])
    return described


def main_records(raw: msgspec.Raw | bytes) -> tuple[str, list[msgspec.Raw]]:
    """The array most worth showing the start of: the payload itself, or its largest array."""
    level = open_level(raw)
    if isinstance(level, list):
        return "@", level
    best: tuple[str, list[msgspec.Raw]] = ("", [])
    if isinstance(level, dict):
        for key, value in level.items():
            inner = open_level(value)
            if isinstance(inner, list) and len(inner) > len(best[1]):
                best = (key, inner)
            elif isinstance(inner, dict):
                for name, deeper in inner.items():
                    found = open_level(deeper) if _kind(deeper) == "array" else None
                    if isinstance(found, list) and len(found) > len(best[1]):
                        best = (f"{key}.{name}", found)
    return best


def shaped_view(payload: bytes, handle: str, size: int, budget: int) -> str:
    """The text the model gets instead of the payload; at most `budget` characters."""
    path, records = main_records(payload)
    view: dict[str, Any] = {
        "note": (
            f"This result is {size:,} characters, more than the {budget:,} shown at once. "
            "It is held whole: call query_result with this handle and a JMESPath query to read it."
        ),
        "handle": handle,
        "shape": shape_of(payload),
    }
    if records:
        view["records"] = {"path": path, "total": len(records), "first": []}
    text = _encode(view).decode()
    if len(text) > budget:
        view["shape"] = _kind(payload)
        text = _encode(view).decode()
    if not records:
        return text[:budget]
    return _add_records(view, records, budget - len(text))


def _add_records(view: dict[str, Any], records: list[msgspec.Raw], room: int) -> str:
    shown: list[msgspec.Raw] = view["records"]["first"]
    for record in records:
        cost = len(_encode(msgspec.json.decode(record))) + 1  # as encoded in the view
        if cost > room:
            break
        shown.append(msgspec.Raw(_encode(msgspec.json.decode(record))))
        room -= cost
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
