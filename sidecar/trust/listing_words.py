"""Every word the shadowing rule could read anywhere in a listing, read at C speed.

Owns one shortcut of the shadowing rule (`sidecar.trust.scan.shadowing`): a listing none of
whose words names another upstream's tool needs no tool's own words. Reading each tool's
words (`identifiers`) walks every key and string of every definition, about 25 ms for 425
tools, and a new process remembers none of it, even with every pin kept; this reads the
listing's JSON instead: split at its quotes, each distinct piece kept once (a listing repeats
its boilerplate), and the word-like runs of those.

What it returns is a superset of the words `identifiers` finds in each tool, never less:
in msgspec's JSON of a tool that is printable ASCII, every key and string appears between
quotes as written, but for the escapes of a quote, a backslash, a tab and a line end, which
are blanked here (each stands for a character no word holds), so each maximal run of word
characters is the same run as in the text the scan reads (lowercased, whitespace folded).
Anything else (other scripts, which the scan folds; an escape of a control character, which
it may strip; DEL) is read by `identifiers` itself, tool by tool. Extra words (schema
keywords, numbers) only cost the exact check `shadowing` makes when a word meets a name.
`tests/trust/test_listing_words.py` generates definitions to hold it to that.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from sidecar.trust.scan import _IDENT, identifiers

__all__ = ["encoded", "listing_words"]

_encode = msgspec.json.Encoder().encode
_WORD_BYTES = b"abcdefghijklmnopqrstuvwxyz0123456789_-"
# every byte to a space but the word characters, capitals lowercased: the runs, split at C speed
_RUNS = bytes(c if c in _WORD_BYTES else c + 32 if 65 <= c <= 90 else 32 for c in range(256))
_BLANKED = ((b"\\\\", b"  "), (b"\\n", b"  "), (b"\\t", b"  "), (b"\\r", b"  "), (b'\\"', b"  "))


def _readable(encoded: bytes) -> bytes | None:
    """`encoded` with the escapes that stand for no word character blanked; None when the
    text it spells is not plain printable ASCII (the scan would read it otherwise)."""
    if not encoded.isascii() or b"\x7f" in encoded:
        return None
    if b"\\" in encoded:
        for escape, blank in _BLANKED:  # an escaped backslash first: `\\n` is a backslash and an n
            encoded = encoded.replace(escape, blank)
        if b"\\" in encoded:  # \u, \b, \f, \/: a character the scan may strip or fold
            return None
    return encoded


def encoded(tool: Mapping[str, Any]) -> bytes:
    """The JSON `listing_words` reads of a tool (the trust memo's plain encoding too)."""
    return _encode(tool)


def listing_words(tools: Sequence[Mapping[str, Any]], encodings: Sequence[bytes] | None = None) -> frozenset[str]:
    """A superset of the words `identifiers` reads in each of `tools` (lowercase);
    `encodings`: each tool's `encoded`, when the caller made them already."""
    words: set[str] = set()
    readable: list[bytes] = []
    for index, tool in enumerate(tools):
        text = _readable(_encode(tool) if encodings is None else encodings[index])
        if text is None:
            words.update(identifiers(tool))
        else:
            readable.append(text)
    pieces = set(b'"'.join(readable).split(b'"'))  # keys and strings, each distinct one once
    for raw in set(b" ".join(pieces).translate(_RUNS).split()):
        if len(raw) < 5:  # shorter than any word of the rule
            continue
        run = raw.decode("ascii")
        words.update(_IDENT.findall(run))  # the run from its first letter
        if "_" in run or "-" in run:  # a name's words, and a key phrase's (`do_not_tell`)
            words.update(_IDENT.findall(run.replace("_", " ").replace("-", " ")))
    return frozenset(words)
