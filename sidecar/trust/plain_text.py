"""The poisoning scan's text of a definition, read the quick way when it is plain.

Owns `plain_text`: the one text the scan reads of a definition (`sidecar.trust.scan`: every
field in walk order, each folded, joined by single spaces), made without what only a finding
needs. The scan's own walk records where each field sits (a path per string, for the finding's
`field`) and folds each field on its own; most definitions of a big listing have no finding, so
their text is made here instead: the same strings in the same order, joined raw, then folded
at once (lower case, whitespace runs to one space), which for printable ASCII is the same text
field by field. A definition that is not printable ASCII (other scripts, invisible or control
characters: the scan strips and folds those field by field) or that nests past `_DEEP` gets
None, and the scan reads it its own way. `tests/trust/test_plain_text.py` holds the two texts
equal on the corpora and on generated definitions.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from sidecar.trust.scan_rules import JSON_TYPES, SCHEMA_WORDS

__all__ = ["plain_join", "plain_strings", "plain_text"]

_TEXT_KEYS = ("description", "title")  # read first, after the name (as the scan's walk does)
_DEEP = 64  # the scan's walk changes its way past this depth; so does this one (to None)
_PRINTABLE = bytes(range(0x20, 0x7F))  # printable ASCII: what `str.isprintable` holds true of an ASCII text
_PRINTABLE_OR_BREAK = _PRINTABLE + b"\t\n\r"


class _TooDeep(Exception):
    """Nested past `_DEEP`, or more strings than asked for (`_Strings.most`)."""


class _Strings(list[str]):
    """The strings walked, and how many make the walk stop: a container is entered only when
    the strings so far and its entries are `most` at most (so at most about 4 x `most` strings
    are walked: an entry adds three at most)."""

    def __init__(self, most: int | None) -> None:
        super().__init__()
        self.most = most if most is not None else sys.maxsize


def plain_text(tool: Mapping[str, Any]) -> str | None:
    """The scan's joined text of `tool`, or None when it is not printable ASCII (tabs and line
    ends allowed) or nests past `_DEEP`."""
    strings = plain_strings(tool)
    return plain_join(strings) if strings is not None else None


def plain_strings(tool: Mapping[str, Any], most: int | None = None) -> list[str] | None:
    """The strings `plain_text` joins, in order (None: nested past `_DEEP`; or, with `most`,
    when they would pass it: the walk stops there, `_Strings`)."""
    out: _Strings = _Strings(most)
    if len(tool) > out.most:
        return None
    name = tool.get("name")
    if isinstance(name, str):
        out.append(name.replace("_", " ").replace("-", " "))
    try:
        for key in [k for k in _TEXT_KEYS if k in tool] + [k for k in tool if k not in _TEXT_KEYS and k != "name"]:
            key = str(key)
            if key not in SCHEMA_WORDS:
                _key(key, out)
            value = tool[key]
            if type(value) is str:  # `_strings(value, key, out, 0)`, in place (without a call)
                if not (key == "type" and value in JSON_TYPES):
                    out.append(value)
            else:  # an object (an input schema) reads its entries and their objects in place there
                _strings(value, key, out, 0)
    except _TooDeep:
        return None
    return out


def plain_join(out: list[str], clean: bool = False) -> str | None:
    """`plain_text` of the strings `plain_strings` gave. `clean`: they are known to hold no
    character below a space and no DEL (`sidecar.trust.pins.clean_json` of their definition's JSON), so only
    whether they are ASCII is told (a flag of the string: no character is read for it)."""
    joined = " ".join(out)
    if clean:
        if not joined.isascii():
            return None
        if "  " not in joined and joined[:1] != " " and joined[-1:] != " ":
            return joined.lower()
        return " ".join(joined.lower().split())
    try:  # ASCII, and its bytes: what is not printable ASCII is left by one `translate` at C speed
        raw = joined.encode("ascii")  # (`str.isprintable` looks each character up: about 5x slower)
    except UnicodeEncodeError:
        return None
    if not raw.translate(None, _PRINTABLE):  # no tab or line end: whitespace runs are runs of spaces only
        if "  " not in joined and joined[:1] != " " and joined[-1:] != " ":
            return joined.lower()  # already folded but for case (most texts: one pass at C speed)
    elif raw.translate(None, _PRINTABLE_OR_BREAK):
        return None
    return " ".join(joined.lower().split())


def _key(key: str, out: list[str]) -> None:
    out.append(key)
    if key.count("_") + key.count("-") >= 2:
        out.append(key.replace("_", " ").replace("-", " "))


def _strings(value: Any, key: str, out: _Strings, depth: int) -> None:
    """Every string of `value` the scan reads, in its walk's order (keys before their values).
    What a call would do for a string, for an object inside an object (a property's schema,
    most often) and for a string inside a list is done in place, without the call (Python
    calls are most of the walk's cost): the same checks, in the same order."""
    if isinstance(value, str):
        if not (key == "type" and value in JSON_TYPES):
            out.append(value)
    elif depth > _DEEP:
        raise _TooDeep
    elif isinstance(value, dict):
        if len(out) + len(value) > out.most:
            raise _TooDeep
        for inner_key, inner in value.items():
            if type(inner_key) is not str:
                inner_key = str(inner_key)
            if inner_key not in SCHEMA_WORDS:  # `_key`, without a call
                out.append(inner_key)
                if ("_" in inner_key or "-" in inner_key) and inner_key.count("_") + inner_key.count("-") >= 2:
                    out.append(inner_key.replace("_", " ").replace("-", " "))
            if type(inner) is str:  # most values: read here, without a call
                if not (inner_key == "type" and inner in JSON_TYPES):
                    out.append(inner)
            elif type(inner) is dict and depth < _DEEP:  # `_strings(inner, inner_key, out, depth + 1)`, in place
                if len(out) + len(inner) > out.most:
                    raise _TooDeep
                for deeper_key, deeper in inner.items():
                    if type(deeper_key) is not str:
                        deeper_key = str(deeper_key)
                    if deeper_key not in SCHEMA_WORDS:
                        out.append(deeper_key)
                        if ("_" in deeper_key or "-" in deeper_key) and deeper_key.count("_") + deeper_key.count("-") >= 2:
                            out.append(deeper_key.replace("_", " ").replace("-", " "))
                    if type(deeper) is str:
                        if not (deeper_key == "type" and deeper in JSON_TYPES):
                            out.append(deeper)
                    else:
                        _strings(deeper, deeper_key, out, depth + 2)
            else:
                _strings(inner, inner_key, out, depth + 1)
    elif isinstance(value, list):
        if len(out) + len(value) > out.most:
            raise _TooDeep
        typed = key == "type"
        for inner in value:
            if type(inner) is str:  # `_strings(inner, key, out, depth + 1)`, in place
                if not (typed and inner in JSON_TYPES):
                    out.append(inner)
            else:
                _strings(inner, key, out, depth + 1)
