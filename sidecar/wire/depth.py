"""The nesting depth of a JSON text, measured without recursion, before anything decodes it.

Every JSON decoder the sidecar uses (msgspec, the standard library) recurses once per
array or object, so a frame nested a thousand deep raises `RecursionError` from inside
the decoder. `too_deep` answers "is this text nested deeper than `limit`?" first.

It is on the hot path of every frame, so it is built to cost almost nothing for normal
ones: a text with at most `limit` opening brackets cannot be deeper than `limit`, and two
`bytes.replace` calls (memchr speed) settle that. Only a text with more brackets than the
limit is scanned exactly: escapes and strings are removed with C-speed byte operations,
innermost pairs are peeled off while that shrinks the text well, and the running depth
of what is left is summed in growing chunks, stopping as soon as it passes the limit.
No Python loop touches the text a byte at a time.

Refuses nothing itself; it says "too deep", and the decoders turn that into an error.
"""

from __future__ import annotations

from array import array
from itertools import accumulate

__all__ = ["MAX_DEPTH", "too_deep", "nesting_depth"]

# Real MCP traffic nests a few dozen levels at most (JSON Schemas are the deepest); the
# decoders fail near 1,000 (the interpreter's recursion limit, shared with the stack that
# calls them). 512 leaves room on both sides.
MAX_DEPTH = 512

_KEEP = b'"[]{}'
_DROP = bytes(b for b in range(256) if b not in _KEEP)
# After the strings are gone: an opener is +1, a closer -1 (as signed bytes).
_SIGNS = bytes.maketrans(b"[]{}", b"\x01\xff\x01\xff")
_CHUNK = 1 << 16  # signs summed at once, at most
_PROBE = 1024  # signs summed first


def too_deep(text: bytes, limit: int = MAX_DEPTH) -> bool:
    """True if arrays and objects in `text` nest deeper than `limit` levels."""
    if len(text) <= limit or _openers(text) <= limit:
        return False
    return nesting_depth(text, stop_above=limit) > limit


def _openers(text: bytes) -> int:
    # `replace` finds what it removes at memchr speed; `count` of one byte walks the text
    # a byte at a time, some times slower on large texts.
    without = text.replace(b"[", b"")
    return len(text) - len(without.replace(b"{", b""))


def _structure(text: bytes) -> bytes:
    """Only the brackets of `text` that are outside strings, in order."""
    if b"\\" in text and b'\\"' in text:  # else no quote is escaped, and the quotes alone mark the strings
        # Backslashes pair left to right inside a string: `\\` is one escaped backslash,
        # then `\"` is an escaped quote. Removing both leaves every real quote in place.
        text = text.replace(b"\\\\", b"").replace(b'\\"', b"")
    kept = text.translate(None, _DROP)
    # Two quotes side by side are an empty string or the seam between two strings: either
    # way no bracket lies outside a string between them, so they go first, in one pass
    # (most strings hold no bracket), and far fewer pieces are left to split.
    kept = kept.replace(b'""', b"")
    if b'"' in kept:
        kept = b"".join(kept.split(b'"')[::2])  # even pieces lie outside strings
    return kept


def _running_max(signs: bytes, depth: int) -> int:
    return max(accumulate(array("b", signs), initial=depth))


def _peel(signs: bytes) -> tuple[bytes, int]:
    """Remove innermost pairs while that shrinks the text well (wide, shallow JSON), each
    pass one level (every deepest point is an opener right before its closer)."""
    levels = 0
    while len(signs) > _CHUNK:
        shorter = signs.replace(b"\x01\xff", b"")
        if len(shorter) * 4 > len(signs) * 3:
            break  # deep rather than wide: the running sum is quicker now
        signs, levels = shorter, levels + 1
    return signs, levels


def nesting_depth(text: bytes, stop_above: int | None = None) -> int:
    """The deepest nesting of arrays and objects in `text` (0 for a scalar).

    With `stop_above`, the scan ends as soon as the depth passes it (the value returned is
    then only known to be larger). Exact for JSON; text that is not JSON (an opener never
    closed) may measure deeper than a decoder would go before it stops, never shallower."""
    signs = _structure(text).translate(_SIGNS)
    if stop_above is not None and _running_max(signs[:_PROBE], 0) > stop_above:
        return stop_above + 1  # deep from the start (the usual attack): no need to look further
    signs, depth = _peel(signs)
    deepest, start, step = depth, 0, _PROBE
    while start < len(signs):
        running = list(accumulate(array("b", signs[start : start + step]), initial=depth))
        deepest, depth = max(deepest, max(running)), running[-1]  # one pass; both ends needed
        if stop_above is not None and deepest > stop_above:
            break
        start, step = start + step, min(step * 4, _CHUNK)
    return deepest
