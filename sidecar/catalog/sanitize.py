"""Catalog text is untrusted: control and invisible characters are stripped, and counted.

Kept: tab, newline and carriage return (descriptions use them). Stripped: the other C0
and C1 controls, DEL, and the invisible format characters (zero-width, bidi overrides,
word joiners, BOM, interlinear annotations, tag characters). Dictionary keys are left
alone, as they name schema properties the upstream will expect back.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["strip_invisible", "might_hold_invisible"]

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
