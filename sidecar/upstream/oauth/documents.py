"""Reading what an authorization server or a server's metadata answers, as JSON.

Owns the one decode of every sign-in answer (metadata documents, registration, token and
revocation answers): bytes already capped by the outbound gate, nesting measured before
any recursion (at most 32 levels; no sign-in document needs more), and anything that is
not JSON read as None, which the readers in `choices` and `exchange` refuse in words.
Never raises.
"""

from __future__ import annotations

import json

__all__ = ["MAX_DEPTH", "nesting", "read_document"]

MAX_DEPTH = 32
_OPEN, _CLOSE, _QUOTE, _ESCAPE = frozenset(b"[{"), frozenset(b"]}"), ord('"'), ord("\\")


def nesting(body: bytes) -> int:
    """The deepest nesting of arrays and objects, outside strings; counted, not recursed."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == _ESCAPE:
                escaped = True
            elif byte == _QUOTE:
                in_string = False
        elif byte == _QUOTE:
            in_string = True
        elif byte in _OPEN:
            depth += 1
            deepest = max(deepest, depth)
        elif byte in _CLOSE:
            depth -= 1
    return deepest


def read_document(body: bytes) -> object:
    """The JSON value of an answer, or None when it is not JSON or nests too deep."""
    if nesting(body) > MAX_DEPTH:
        return None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None
