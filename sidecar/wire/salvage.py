"""What can still be known of a frame that was dropped whole (over a size cap, too deep).

A dropped frame may be the answer some request is waiting for: if nothing is said, that
request never ends. Only the frame's first and last bytes are kept (`DroppedFrame`), and
`salvage` reads from them the top-level members whose values are scalars: the `id`
and `method` of a frame that puts them before its big part (`{"jsonrpc":"2.0","id":7,
"result":...`) or after it (`...,"id":7}`), whatever the order. A member is only read
where it provably sits in the outermost object: from the head, when only scalar
members come before it; from the tail, when only scalar members follow it up to the
closing brace. No I/O; nothing here decodes the big part.
"""

from __future__ import annotations

import functools
import re

import msgspec

__all__ = ["DroppedFrame", "Salvaged", "salvage", "EDGE_BYTES"]

# How much of a dropped frame's head and tail is kept to look for its id.
EDGE_BYTES = 4096

_STRING = rb'"(?:[^"\\]|\\.)*"'
_SCALAR = rb'(?:' + _STRING + rb'|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)'
_MEMBER = rb'\s*(' + _STRING + rb')\s*:\s*(' + _SCALAR + rb')\s*'
_KEYS = (b"id", b"method")
_TAIL_TRIES = 8


class DroppedFrame(msgspec.Struct, frozen=True):
    """A frame that never reached a decoder: its size, the limit it broke, its edges."""

    size: int
    why: str  # e.g. "over the 1048576-byte line cap"
    head: bytes
    tail: bytes
    may_answer: bool = True  # False where answers never come (a Streamable HTTP GET stream)


class Salvaged(msgspec.Struct, frozen=True):
    id: int | str | None = None
    method: str | None = None

    @property
    def is_answer(self) -> bool:
        return self.id is not None and self.method is None


def _scalar(raw: bytes) -> object:
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return None


@functools.cache
def _patterns() -> tuple[re.Pattern[bytes], re.Pattern[bytes], re.Pattern[bytes], re.Pattern[bytes]]:
    """The head's start, a head member, one member, the rest of a tail: compiled on the
    first dropped frame, not at start-up (the early `initialize` answer imports this module)."""
    return (re.compile(rb'\s*\{'), re.compile(_MEMBER + rb'(,|\}|\Z)'), re.compile(_MEMBER),
            re.compile(rb'(?:,' + _MEMBER + rb')*\}\s*\Z'))


def _from_head(head: bytes) -> dict[bytes, object]:
    head_start, head_member, _, _ = _patterns()
    found: dict[bytes, object] = {}
    start = head_start.match(head)
    position = start.end() if start else len(head)
    while start is not None:
        member = head_member.match(head, position)
        if member is None:
            break
        found.setdefault(member.group(1)[1:-1], _scalar(member.group(2)))
        if member.group(3) != b",":
            break
        position = member.end()
    return found


def _from_tail(tail: bytes, key: bytes) -> object:
    """The value of `key` when it is one of the last scalar members of the outer object."""
    _, _, one_member, tail_rest = _patterns()
    end = len(tail)
    for _ in range(_TAIL_TRIES):
        at = tail.rfind(b'"%b"' % key, 0, end)
        if at < 0:
            return None
        before = tail[:at].rstrip()
        member = one_member.match(tail, at)
        if member is not None and before[-1:] in (b",", b"{") and tail_rest.match(tail, member.end()):
            return _scalar(member.group(2))
        end = at
    return None


def salvage(head: bytes, tail: bytes = b"") -> Salvaged:
    """The `id` and `method` of a frame known only by its first and last bytes."""
    members = _from_head(head)
    values = {key: members.get(key) for key in _KEYS}
    for key in _KEYS:
        if values[key] is None and tail:
            values[key] = _from_tail(tail, key)
    ident, method = values[b"id"], values[b"method"]
    return Salvaged(
        ident if type(ident) in (int, str) else None,  # type: ignore[arg-type]
        method if isinstance(method, str) else None,
    )
