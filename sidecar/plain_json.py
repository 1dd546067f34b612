"""JSON read and written with the C scanner and encoder `json` itself uses, without importing
`json`: `json.decoder` and `json.encoder` import `re` (with `enum`, `functools` and
`collections`), about 10 ms of CPU on a small machine, which the early path of a stdio start
(`sidecar.entry`: the config, the engine's first lines, the upstreams' greetings, the
listing snapshot's key) does not pay. The runtime, which imports `json` anyway, is free to
use either.

Owns `json_document` (`json.loads`, hooks included) and `json_text` (`json.dumps` of the
compact and default separators, `ensure_ascii` and `sort_keys`); each falls back to `json`
itself where the bytes or the interpreter ask for it, so what they return and raise is
`json`'s (tests compare both over generated values). Standard library only, no I/O.
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` waits too
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["json_document", "json_text"]

_WHITESPACE = " \t\n\r"  # json's WHITESPACE, around the one value


def _constant(name: str) -> float:
    return {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}[name]


class _Decoding:
    """What `json.JSONDecoder(...)` hands its C scanner: strict, `float` and `int`, the three
    constants `json` accepts unless another reader is given, and the pairs hook given."""

    strict = True
    object_hook = None
    parse_float = float
    parse_int = int

    def __init__(self, object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None,
                 parse_constant: Callable[[str], Any] | None) -> None:
        self.object_pairs_hook = object_pairs_hook
        self.parse_constant = parse_constant or _constant


def json_document(data: bytes, *, object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
                  parse_constant: Callable[[str], Any] | None = None) -> Any:
    """`json.loads(data, ...)` with these hooks, read by the same C scanner `json.loads` uses
    but without importing `json`; ValueError where `json.loads` raises it (a hook's own
    error as it raised it). Bytes that `json.loads` would not read as UTF-8 (a byte order
    mark, NULs of UTF-16 or -32 in the first four) and interpreters without the C scanner go
    through `json.loads` itself."""
    try:
        from _json import make_scanner
    except ImportError:  # an interpreter without the C scanner
        make_scanner = None  # type: ignore[assignment,misc]
    if make_scanner is None or data[:3] == b"\xef\xbb\xbf" or data[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\0" in data[:4]:
        import json

        return json.loads(data, object_pairs_hook=object_pairs_hook, parse_constant=parse_constant)
    text = data.decode("utf-8", "surrogatepass")  # what json.loads decodes UTF-8 bytes with
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        document, end = make_scanner(_Decoding(object_pairs_hook, parse_constant))(text, start)  # type: ignore[arg-type]
    except StopIteration:
        raise ValueError("Expecting value") from None
    if text[end:].strip(_WHITESPACE):
        raise ValueError("Extra data")
    return document


def _not_json(value: object) -> Any:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def json_text(value: object, *, ascii: bool = True, sort_keys: bool = False, compact: bool = True) -> str:
    """`json.dumps(value, ensure_ascii=ascii, sort_keys=sort_keys)` with the separators
    `(",", ":")` (`compact`) or json's default `(", ", ": ")`, by the C encoder `json.dumps`
    uses, without importing `json` (where the interpreter has no C encoder, `json` itself)."""
    try:
        from _json import encode_basestring, encode_basestring_ascii, make_encoder
    except ImportError:  # an interpreter without the C encoder
        import json

        return json.dumps(value, ensure_ascii=ascii, sort_keys=sort_keys,
                          separators=(",", ":") if compact else (", ", ": "))
    quote = encode_basestring_ascii if ascii else encode_basestring
    if isinstance(value, str):
        return quote(value)
    encode = make_encoder({}, _not_json, quote, None, ":" if compact else ": ", "," if compact else ", ",
                          sort_keys, False, True)
    return "".join(encode(value, 0))
