"""JSON as people paste it: `//` and `/* */` comments and trailing commas are accepted.

Owns one forgiving pass that blanks comments and drops a comma before `}` or `]`, outside
strings, then hands the text to the strict decoder. Refuses everything else the strict
decoder refuses, with the line and column.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["JSONProblem", "loads", "loosen"]


class JSONProblem(ValueError):
    """The text is not JSON even when read kindly; the message says where."""


def loads(text: str) -> Any:
    try:
        return json.loads(loosen(text))
    except json.JSONDecodeError as exc:
        raise JSONProblem(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None


def loosen(text: str) -> str:
    """Comments become spaces (so positions hold) and trailing commas disappear."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == '"':
            end = _string_end(text, i)
            out.append(text[i:end])
            i = end
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("".join(c if c == "\n" else " " for c in text[i:end]))
            i = end
        elif char == "," and _closes_next(text, i + 1):
            out.append(" ")
            i += 1
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _string_end(text: str, start: int) -> int:
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == '"':
            return i + 1
        elif text[i] == "\n":
            return i  # an unclosed string: let the strict decoder say so
        else:
            i += 1
    return len(text)


def _closes_next(text: str, i: int) -> bool:
    """The next meaningful character (skipping blanks and comments) is `}` or `]`."""
    while i < len(text):
        if text[i].isspace():
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = len(text) if end < 0 else end + 2
        else:
            return text[i] in "}]"
    return False
