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

__all__ = ["Level", "Opened", "open_payload", "shape_of", "main_records", "shaped_view", "cut_text", "open_level"]

MAX_KEYS = 40
MAX_DEPTH = 3
ITEMS_SAMPLED = 25
_encode = msgspec.json.encode
_one_level = msgspec.json.Decoder(list[msgspec.Raw] | dict[str, msgspec.Raw])
_SCALAR_KINDS = {ord('"'): "string", ord("t"): "boolean", ord("f"): "boolean", ord("n"): "null"}

Level = list[msgspec.Raw] | dict[str, msgspec.Raw]
Scalar = str | int | float | bool | None
Deep = dict[str, list[msgspec.Raw] | dict[str, msgspec.Raw] | Scalar]
_two_levels = msgspec.json.Decoder(Deep)  # an object and each of its values opened in one parse


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


class Opened:
    """A value of the payload, each of its levels opened at most once however often the
    shape and the records ask for it (both walk the same top levels)."""

    __slots__ = ("raw", "_level", "_children", "_kind")

    def __init__(self, raw: msgspec.Raw | bytes, level: Level | Deep | None | bool = False, kind: str = "") -> None:
        self.raw = raw
        self._level = level  # False: not opened yet
        self._children: dict[str | int, Opened] = {}
        self._kind = kind

    @property
    def level(self) -> Level | Deep | None:
        if self._level is False:
            self._level = open_payload(self.raw)
        return self._level  # type: ignore[return-value]

    def child(self, key: str | int) -> Opened:
        found = self._children.get(key)
        if found is None:
            level = self.level
            assert level is not None
            found = self._children[key] = _opened(level[key])  # type: ignore[index]
        return found

    def kind(self) -> str:
        return self._kind or _kind(self.raw)


def _opened(value: msgspec.Raw | list[msgspec.Raw] | dict[str, msgspec.Raw] | Scalar) -> Opened:
    """A child as its parent's parse left it: a view still closed, or a level already open."""
    if isinstance(value, msgspec.Raw):
        return Opened(value)
    if isinstance(value, list):
        return Opened(b"", value, "array")
    if isinstance(value, dict):
        return Opened(b"", value, "object")
    kind = "boolean" if isinstance(value, bool) else "null" if value is None else \
        "string" if isinstance(value, str) else "number"
    return Opened(b"", None, kind)


def open_payload(raw: msgspec.Raw | bytes) -> Level | Deep | None:
    """The top of a payload in one parse: an array's items as views; an object's values
    each opened one level too (their own values as views), so the shape and the records
    need not parse the payload again. None for a scalar; DecodeError if not JSON."""
    if _kind(raw) != "object":
        return open_level(raw)
    try:
        return _two_levels.decode(raw)
    except msgspec.DecodeError:  # a number out of range for Python's types, say: one level, as views
        return open_level(raw)


def shape_of(raw: msgspec.Raw | bytes | Opened, depth: int = 0) -> Any:
    """A small description: object keys with their shapes, array lengths and item keys."""
    value = raw if isinstance(raw, Opened) else Opened(raw)
    level = value.level
    if isinstance(level, dict):
        if depth >= MAX_DEPTH:
            return {"object": f"{len(level)} keys"}
        keys = list(level)[:MAX_KEYS]
        shape: dict[str, Any] = {k: shape_of(value.child(k), depth + 1) for k in keys}
        if len(level) > MAX_KEYS:
            shape["…"] = f"{len(level) - MAX_KEYS} more keys"
        return shape
    if isinstance(level, list):
        return _array_shape(value)
    return value.kind()


def _array_shape(value: Opened) -> dict[str, Any]:
    items = value.level
    assert isinstance(items, list)
    described: dict[str, Any] = {"array": len(items)}
    item_keys: dict[str, None] = {}
    for index in range(min(len(items), ITEMS_SAMPLED)):
        opened = value.child(index).level
        if isinstance(opened, dict):
            item_keys.update(dict.fromkeys(opened))
    if item_keys:
        described["itemKeys"] = list(item_keys)[:MAX_KEYS]
    elif items:
        described["items"] = _kind(items[0])
    return described


def main_records(raw: msgspec.Raw | bytes | Opened) -> tuple[str, list[msgspec.Raw]]:
    """The array most worth showing the start of: the payload itself, or its largest array."""
    value = raw if isinstance(raw, Opened) else Opened(raw)
    level = value.level
    if isinstance(level, list):
        return "@", level
    best: tuple[str, list[msgspec.Raw]] = ("", [])
    if isinstance(level, dict):
        for key in level:
            inner_value = value.child(key)
            inner = inner_value.level
            if isinstance(inner, list) and len(inner) > len(best[1]):
                best = (key, inner)
            elif isinstance(inner, dict):
                for name in inner:
                    deeper = inner_value.child(name)
                    found = deeper.level if deeper.kind() == "array" else None
                    if isinstance(found, list) and len(found) > len(best[1]):
                        best = (f"{key}.{name}", found)
    return best


def shaped_view(payload: bytes, handle: str, size: int, budget: int, level: Level | Deep | None = None) -> str:
    """The text the model gets instead of the payload; at most `budget` characters.
    `level`: the payload's top level when the caller has opened it already."""
    value = Opened(payload, level) if level is not None else Opened(payload)
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
        view["shape"] = _kind(payload)
        text = _encode(view).decode()
    if not records:
        return text[:budget]
    return _add_records(view, records, budget - len(text))


def _add_records(view: dict[str, Any], records: list[msgspec.Raw], room: int) -> str:
    shown: list[msgspec.Raw] = view["records"]["first"]
    for record in records:
        compact = _encode(msgspec.json.decode(record))  # as encoded in the view
        if len(compact) + 1 > room:
            break
        shown.append(msgspec.Raw(compact))
        room -= len(compact) + 1
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
