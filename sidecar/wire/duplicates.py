"""Whether a JSON text repeated a key in some object, judged after its one decode.

msgspec keeps the last of a repeated key and says nothing, so the decoded value alone
cannot tell. The text can, with one count: outside strings, a `:` appears in JSON only
between a member's key and its value, so the text's colons are its members plus the
colons written inside its strings. msgspec's re-encoding of the decoded value writes a
colon only in those two places too. When no member was dropped, both counts are equal
(each string decodes to the same characters it spells, a colon being a colon); a
dropped member takes its own separator with it, so a repeated key always makes the
re-encoding count fewer. The one way a string can spell a colon without writing one is
the escape `\\u003a`: a text containing it is read again, exactly, by the standard
library with a hook that sees every member (rare, and linear in the text).

Costs one re-encoding and one comparison, at C speed and bounded by the text's size,
when the text is compact as msgspec writes it (the re-encoding equal to the text holds
every member it held); two counts more otherwise. Never recurses beyond what the decode
did. Refuses nothing itself.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

__all__ = ["has_duplicate_key"]

_encode = msgspec.json.encode


class _Repeated(ValueError):
    pass


def _unique_members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    members = dict(pairs)
    if len(members) != len(pairs):
        raise _Repeated
    return members


_exact = json.JSONDecoder(object_pairs_hook=_unique_members)


def has_duplicate_key(text: bytes, decoded: object, again: bytes | None = None) -> bool:
    """True if `text` (already decoded to `decoded` by msgspec) repeats a key; `again`, when
    the caller has it, is `decoded` re-encoded (not made a second time)."""
    # One flat function on purpose: it runs on every engine frame. A compact sender (a
    # Node engine's `JSON.stringify`, msgspec) writes exactly what msgspec writes back, and
    # a text equal to its re-encoding has the same colons and no `\\u003a`: nothing was
    # dropped, settled by one comparison. Any other text gets the colon counts below.
    if again is None:
        again = _encode(decoded)
    if again == text:
        return False
    # `replace` finds what it removes at memchr speed; `count` of one byte walks the text a
    # byte at a time, several times slower on large texts.
    colons = len(text) - len(text.replace(b":", b""))
    if not colons:
        return False  # not a single object member
    if b"\\" in text and (b"\\u003a" in text or b"\\u003A" in text):  # memchr first
        return _repeats_exactly(text)
    return len(again) - len(again.replace(b":", b"")) != colons


def _repeats_exactly(text: bytes) -> bool:
    try:
        _exact.decode(text.decode("utf-8", "replace"))
    except _Repeated:
        return True
    except ValueError:  # msgspec read it, the standard library cannot (an int of 4,300+
        return True  # digits): not proven free of repeats, so refused as if repeated
    return False
