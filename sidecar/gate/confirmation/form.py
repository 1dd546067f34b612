"""The words a person reads before allowing a call: the one rendering of a confirmation.

Owns the message of the confirmation form (RELIABILITY rule 18: what the model controls
never shapes what a person reads). Its lines are exactly a fixed header and then one
line per argument, in the call's order, each `  "name": value` with the name and the
value written as compact JSON. Nothing a value holds can start a line or hide text:

* JSON already escapes quotes, backslashes and C0 controls; on top of that every other
  character that breaks, reorders or hides text is written as a `\\uXXXX` escape (DEL and
  C1 controls, format characters such as the bidi overrides and zero-width ones, the
  line and paragraph separators, spaces other than the plain one, invisible fillers),
  and a run of three or more plain spaces is escaped past its second space, so padding
  shows as what it is;
* a value longer than `VALUE_CHARS` is cut, and its full length is stated;
* a secret-looking name shows `[redacted]`, and configured secrets are redacted before
  anything is cut (a cut never leaves half a secret);
* no argument is ever dropped: past `SHOWN_VALUES`, the header says how many there
  are and the rest are listed by name, one line each.

Pure: text in, text out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from sidecar.redact import Redactor

__all__ = ["SHOWN_VALUES", "VALUE_CHARS", "argument_lines", "confirmation_message", "visible"]

VALUE_CHARS = 120  # of one value's JSON text, at most
NAME_CHARS = 80  # of one argument name's JSON text, at most
SHOWN_VALUES = 12  # arguments shown with their values; the rest by name
_SECRET_NAME = re.compile(r"pass(word|phrase)?|secret|token|api[_-]?key|private|credential|auth|cookie|session", re.I)
_HIDING_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})
# Letters and symbols that draw nothing (Hangul fillers, the braille blank, ...).
_BLANK_LOOKING = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e")


def _hides(char: str) -> bool:
    if char < "\x7f":
        return char < " "
    import unicodedata  # here: a face that never shows a form never loads it (issue 23, idle RSS)

    return unicodedata.category(char) in _HIDING_CATEGORIES or char in _BLANK_LOOKING


def _escape(char: str) -> str:
    point = ord(char)
    if point > 0xFFFF:  # as JSON writes it: a surrogate pair
        point -= 0x10000
        return f"\\u{0xD800 + (point >> 10):04x}\\u{0xDC00 + (point & 0x3FF):04x}"
    return f"\\u{point:04x}"


def visible(text: str, limit: int | None = None) -> tuple[str, bool]:
    """`text` with every hiding character escaped and long space runs broken, cut once
    the written form passes `limit`; returns it and whether it was cut."""
    out: list[str] = []
    written = spaces = 0
    for char in text:
        spaces = spaces + 1 if char == " " else 0
        piece = _escape(char) if spaces > 2 or (char != " " and _hides(char)) else char
        if limit is not None and written + len(piece) > limit:
            return "".join(out), True
        out.append(piece)
        written += len(piece)
    return "".join(out), False


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):  # not JSON (never from the wire): shown by its kind only
        return json.dumps(f"<{type(value).__name__}>")


def _value_text(name: str, value: Any, redact: Redactor) -> str:
    if _SECRET_NAME.search(name):
        return "[redacted]"
    text = redact(_json(value))
    shown, cut = visible(text, VALUE_CHARS)
    if not cut:
        return shown
    size = len(value) if isinstance(value, str) else len(text)
    return f"{shown}... (cut: {size:,} characters in all)"


def _name_text(name: str, redact: Redactor) -> str:
    shown, cut = visible(redact(_json(name)), NAME_CHARS)
    return f"{shown}...\"" if cut else shown


def argument_lines(arguments: Mapping[str, Any], redact: Redactor) -> list[str]:
    """One line per argument: the first `SHOWN_VALUES` with their values, then names."""
    lines = []
    for index, (name, value) in enumerate(arguments.items()):
        shown = _value_text(name, value, redact) if index < SHOWN_VALUES else "(value not shown)"
        lines.append(f"  {_name_text(name, redact)}: {shown}")
    return lines


def _count_line(count: int) -> str:
    if count == 0:
        return "Arguments: none."
    if count <= SHOWN_VALUES:
        return f"Arguments ({count}), each on its own line as JSON:"
    return (f"Arguments ({count}), each on its own line as JSON; the values of the first {SHOWN_VALUES} "
            f"are shown, the other {count - SHOWN_VALUES} by name only:")


def confirmation_message(tool: str, upstream: str, arguments: Mapping[str, Any], redact: Redactor,
                         reason: str = "") -> str:
    """The whole message: two header lines, then `argument_lines`."""
    why = f" ({visible(reason, 200)[0]})" if reason else ""
    question = f"Allow the tool '{visible(tool, 200)[0]}' of server '{visible(upstream, 200)[0]}' to run{why}?"
    return "\n".join([question, _count_line(len(arguments)), *argument_lines(arguments, redact)])
