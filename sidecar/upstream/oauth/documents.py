"""Reading what an authorization server or a server's metadata answers, as JSON.

Owns the one decode of every sign-in answer (metadata documents, registration, token and
revocation answers): bytes already capped by the outbound gate, nesting measured before
any recursion (at most 32 levels; no sign-in document needs more), and anything that is
not JSON read as None, which the readers in `choices` and `exchange` refuse in words.
Never raises.
"""

from __future__ import annotations

import json

from sidecar.wire.depth import too_deep

__all__ = ["MAX_DEPTH", "read_document"]

MAX_DEPTH = 32


def read_document(body: bytes) -> object:
    """The JSON value of an answer, or None when it is not JSON or nests too deep."""
    if too_deep(body, MAX_DEPTH):  # measured without recursion, as every engine frame is
        return None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None
