"""Upstream frames whose text is not valid JSON text, repaired value by value.

msgspec refuses a whole frame for one bad string: a lone UTF-16 surrogate escape
(`"\\ud800"`), an unknown escape (`"\\x"`), a raw control character, a number out of
range. A `tools/list` answer refused for one tool's description would cost the whole
upstream (its listing never arrives). `repair_frame` is the slow path taken only after
msgspec refused a frame: invalid UTF-8 and bad escapes are replaced (U+FFFD; a lone
backslash kept as text), the rest is read by the standard library's tolerant decoder,
and the frame is re-encoded canonically. Only the bad values change; `Repair` says how
many, and why, so the owner can count and log the real reason.

Engine frames never come here: what the gate judges is decoded strictly.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import msgspec

__all__ = ["Repair", "repair_frame"]

# Two-character escapes pass; a surrogate pair passes; any other `\\uXXXX` is judged
# alone; any other backslash starts a bad escape.
_ESCAPE = re.compile(
    r'\\(?:["\\/bfnrt]|u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.?)', re.DOTALL
)
_SURROGATES = range(0xD800, 0xE000)
_CONTROL = re.compile(r"[\x00-\x1f]")


class Repair(msgspec.Struct, frozen=True):
    frame: bytes  # the repaired frame, canonically encoded
    values: int  # how many bad pieces of text or numbers were replaced
    reasons: tuple[str, ...]  # what was wrong, in words


def _count(found: dict[str, int], reason: str) -> None:
    found[reason] = found.get(reason, 0) + 1


def _fix_escape(token: str, found: dict[str, int]) -> str:
    if len(token) == 12 or (len(token) == 2 and token[1] in '"\\/bfnrt'):
        return token  # a surrogate pair, or a plain escape
    if len(token) == 6 and token[1] == "u":
        if int(token[2:], 16) not in _SURROGATES:
            return token
        _count(found, "a lone UTF-16 surrogate")
        return "\\ufffd"
    _count(found, "an unknown escape")
    return "\\\\" + token[1:]  # the backslash kept, as text


def _finite(value: Any, found: dict[str, int]) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        _count(found, "a number out of range")
        return None
    if isinstance(value, dict):
        return {k: _finite(v, found) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v, found) for v in value]
    return value


def repair_frame(line: bytes) -> Repair | None:
    """The frame with its bad text replaced, or None when it is not JSON even so."""
    found: dict[str, int] = {}
    text = line.decode("utf-8", "replace")
    replaced = text.count("\ufffd") - line.count(b"\xef\xbf\xbd")  # beside any U+FFFD already there
    if replaced:
        found["invalid UTF-8"] = replaced
    if "\\" in text:
        text = _ESCAPE.sub(lambda m: _fix_escape(m.group(), found), text)
    controls = len(_CONTROL.findall(text))
    if controls:
        found["a raw control character"] = controls
    try:
        value = json.loads(text, strict=False, parse_constant=lambda _: _count(found, "NaN or Infinity"))
        frame = msgspec.json.encode(_finite(value, found))
    except (ValueError, TypeError, RecursionError, msgspec.EncodeError):
        return None
    return Repair(frame, sum(found.values()), tuple(sorted(found)))
