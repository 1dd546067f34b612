"""What one search answer shows, inside a published byte budget.

Owns the shape every search tool answers in (`find_tool`, a trio's search, the shared
trio's): the best `FULL_SHOWN` tools in full (name, description, input schema), then the
next `SHORT_SHOWN` by name with one line each, then up to `NAMES_SHOWN` further names
alone (at most `NAMES_BYTES` of them), then whatever the caller adds (the verdict, a hint,
the area summary). The bare names are there because the engine's model re-sorts a ranked
list better than any small local ranker, and a name costs about 30 bytes: the right tool
is far more often in the ranker's top 40 than in its top 10. The text the model reads,
the answer's JSON, stays within `ANSWER_BYTES`: when it would not, the three full tools
are cut step by step (long descriptions first, then property descriptions inside the
schemas, then the schema down to its property names and types), and only as a last
resort does a full tool move down to the short list. The short list itself is never
dropped; the bare names go only when one tool cut to its bones still does not fit. Pure
functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

__all__ = ["ANSWER_BYTES", "FULL_SHOWN", "IN_VIEW", "LINE_CHARS", "NAMES_BYTES", "NAMES_SHOWN", "SHORT_SHOWN", "Shown",
           "fit_answer", "one_line", "shown_names"]

ANSWER_BYTES = 6144  # the published budget of one search answer's text (UTF-8 bytes)
FULL_SHOWN = 3
SHORT_SHOWN = 7
NAMES_SHOWN = 30  # ranks 11..40, by name alone
NAMES_BYTES = 1200  # the most the bare names take of the budget (about 30 names of 35 characters)
IN_VIEW = FULL_SHOWN + SHORT_SHOWN + NAMES_SHOWN  # ranked tools an answer can show
LINE_CHARS = 140  # one line of the short list, at most

# The cutting steps, gentlest first: (description characters, property-description
# characters; None keeps it whole, 0 drops it). The last step also reduces each property
# to its type, enum and items.
_STEPS: tuple[tuple[int | None, int | None], ...] = (
    (None, None), (1500, 240), (700, 120), (400, 60), (240, 0),
)
_KEPT_BARE = ("type", "enum", "items", "required", "properties", "anyOf", "oneOf")

Shown = tuple[str, Mapping[str, Any]]  # (engine-visible name, the tool's spec)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return f"{cut}…"


def one_line(text: object, limit: int = LINE_CHARS) -> str:
    """The first sentence or line of a description, at most `limit` characters."""
    if not isinstance(text, str):
        return ""
    first = " ".join(text.strip().splitlines()[0].split()) if text.strip() else ""
    end = first.find(". ")
    if 0 < end < limit:
        first = first[: end + 1]
    return _cut(first, limit)


def _cut_schema(node: object, chars: int | None, bare: bool, depth: int = 0) -> object:
    """A copy of a schema with its texts cut to `chars` (0: dropped); `bare` keeps only
    what a call needs (types, enums, nesting)."""
    if depth > 8:
        return {}
    if isinstance(node, list):
        return [_cut_schema(item, chars, bare, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    copy: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            copy[key] = {k: _cut_schema(v, chars, bare, depth + 1) for k, v in value.items()}
        elif bare and key not in _KEPT_BARE and depth > 0:
            continue
        elif key in ("description", "title") and isinstance(value, str):
            if chars != 0:
                copy[key] = value if chars is None else _cut(value, chars)
        elif key == "examples" and chars is not None:
            continue
        else:
            copy[key] = _cut_schema(value, chars, bare, depth + 1)
    return copy


def _full(shown: Shown, step: int) -> dict[str, Any]:
    name, spec = shown
    description = spec.get("description")
    description = description if isinstance(description, str) else ""
    schema = spec.get("inputSchema", {"type": "object"})
    chars, inner = _STEPS[step]
    tool: dict[str, Any] = {"name": name, "description": description if chars is None else _cut(description, chars)}
    tool["inputSchema"] = schema if inner is None else _cut_schema(schema, inner, step == len(_STEPS) - 1)
    if step > 0 and (tool["description"] != description or tool["inputSchema"] != schema):
        tool["cut"] = True  # the model learns this is not the whole text
    return tool


def _short(shown: Shown) -> dict[str, str]:
    return {"name": shown[0], "about": one_line(shown[1].get("description"))}


def _size(payload: Mapping[str, Any]) -> int:
    return len(msgspec.json.encode(payload))


def _bare_names(found: Sequence[Shown]) -> list[str]:
    """The names after the short list, best first, while they fit in `NAMES_BYTES`."""
    names: list[str] = []
    used = len(b',"names":[]')
    for name, _ in found[FULL_SHOWN + SHORT_SHOWN : IN_VIEW]:
        used += len(msgspec.json.encode(name)) + 1
        if used > NAMES_BYTES:
            break
        names.append(name)
    return names


def shown_names(answer: Mapping[str, Any]) -> list[str]:
    """Every tool name an answer puts in front of the model, in its order."""
    whole = [t["name"] for t in answer.get("tools", ())]
    return whole + [t["name"] for t in answer.get("more", ())] + list(answer.get("names", ()))


def fit_answer(found: Sequence[Shown], extra: Mapping[str, Any], budget: int = ANSWER_BYTES) -> dict[str, Any]:
    """The answer for ranked `found` (best first): `tools` in full, `more` by one line
    each, `names` alone, then `extra`; within `budget` bytes whenever the short list and
    `extra` allow."""
    full, rest = list(found[:FULL_SHOWN]), list(found[FULL_SHOWN : FULL_SHOWN + SHORT_SHOWN])
    names = {"names": bare} if (bare := _bare_names(found)) else {}
    while True:
        more = [_short(s) for s in rest]
        for step in range(len(_STEPS)):
            payload = {"tools": [_full(s, step) for s in full], "more": more, **names, **extra}
            if _size(payload) <= budget:
                return payload
        if len(full) <= 1:
            if names:  # the bare names go before the answer is let past its budget
                names = {}
                continue
            return payload  # one tool cut to its bones: shown even over the budget
        rest.insert(0, full.pop())  # the weakest full tool joins the short list
