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
# On encoded JSON text: either a raw invisible character or an escape that may spell one.
# False positives only cost a walk; a miss is impossible because every string in JSON
# text holds the character raw or as one of these escapes.
_SUSPECT_TEXT = re.compile(
    _INVISIBLE.pattern[:-1]
    + r"]|\\[bf]|\\u00[01][0-9a-fA-F]|\\u00[7-9a-fA-F][0-9a-fA-F]|\\u0[0-9a-fA-F]{3}"
    r"|\\u[12fF][0-9a-fA-F]{3}|\\u[dD][bB]40"
)


def might_hold_invisible(json_text: bytes) -> bool:
    """A fast pre-check on encoded JSON; False means `strip_invisible` would change nothing."""
    return _SUSPECT_TEXT.search(json_text.decode("utf-8", "replace")) is not None


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
