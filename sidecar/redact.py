"""Redaction of secret values wherever text leaves the process: logs, errors, answers to the
engine, the server commands' printed lines, the audit file. The one mechanism for all.

A secret is hidden in its plain form and in the encodings it is found in: JSON-escaped
(once and twice, `\\/` and `\\uXXXX` variants), percent-encoded (upper and lower hex,
`+` for spaces or not), and base64 (standard and URL alphabets, alone with or without
padding, and inside a longer encoded string at each of the three byte alignments, less
the boundary characters that depend on the neighbours: so `user:secret` is covered
whatever the user's length). `Redactor(text)` replaces the forms in text;
`Redactor.json(raw)` cleans a JSON answer, untouched and undecoded when no form occurs in
its bytes (the common case, one substring search per form). Which values are secrets is
decided where they are configured (`answer_secrets` picks those fit to hide in answers).
"""

from __future__ import annotations

import logging
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

__all__ = ["MASK", "RedactingFilter", "Redactor", "answer_secrets", "encoded_forms", "url_credentials"]

MASK = "[redacted]"
_MIN_SECRET = 4
_MIN_EMBEDDED_BASE64 = 8
_SMALL = 16384  # answers up to this many bytes are searched as text  # an aligned base64 piece shorter than this would hide ordinary words
_HEX = re.compile(r"%[0-9A-F]{2}")
CREDENTIAL_NAME = re.compile(
    r"(?:api[_-]?key|apikey|key|token|secret|pass|pwd|auth|credential|cookie|session|"
    r"private|signature|bearer)",
    re.IGNORECASE,
)


def _json_forms(text: str) -> set[str]:
    import json  # only a config with secrets pays for it

    once = json.dumps(text)[1:-1]
    raw = json.dumps(text, ensure_ascii=False)[1:-1]
    return {once, raw, once.replace("/", "\\/"), raw.replace("/", "\\/"), json.dumps(once)[1:-1]}


def _percent_forms(text: str) -> set[str]:
    raw = text.encode("utf-8", "replace")  # a lone surrogate cannot be percent-encoded as it is
    forms = {urllib.parse.quote(raw, safe=""), urllib.parse.quote_plus(raw), urllib.parse.quote(raw)}
    return forms | {_HEX.sub(lambda m: m.group(0).lower(), f) for f in forms}


def _base64_forms(raw: bytes) -> set[str]:
    import base64

    whole = base64.b64encode(raw).decode()
    forms = {whole, whole.rstrip("=")}
    for align in range(3):
        encoded = base64.b64encode(b"\0" * align + raw).decode()
        piece = encoded[(8 * align + 5) // 6:(8 * (align + len(raw))) // 6]
        if len(piece) >= _MIN_EMBEDDED_BASE64:
            forms.add(piece)
    return forms | {f.translate(str.maketrans("+/", "-_")) for f in forms}


def encoded_forms(secret: str) -> set[str]:
    """Every form of `secret` this module hides (each at least _MIN_SECRET characters)."""
    forms = {secret} | _json_forms(secret) | _percent_forms(secret) | _base64_forms(secret.encode("utf-8", "replace"))
    return {f for f in forms if len(f) >= _MIN_SECRET}


def _least(forms: list[bytes]) -> list[bytes]:
    """The forms that contain no other (shortest first): finding one of them is enough to
    know a cleaning is needed, and each search of a large answer costs."""
    kept: list[bytes] = []
    for form in forms:
        if not any(shorter in form for shorter in kept):
            kept.append(form)
    return kept


class Redactor:
    """Replaces every form of every secret it holds with MASK."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._forms: list[str] = []
        self._in_json: list[bytes] = []
        self._in_json_text: list[str] = []
        self._shortest = 0
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        found = set(self._forms)
        for secret in secrets:
            if len(secret) >= _MIN_SECRET:
                found |= encoded_forms(secret)
        self._forms = sorted(found, key=len, reverse=True)
        in_json = sorted({piece.encode("utf-8", "replace") for form in found for piece in _json_forms(form) | {form}},
                         key=len)
        self._in_json = _least(in_json)
        self._in_json_text = [form.decode() for form in self._in_json]
        self._shortest = len(self._in_json[0]) if self._in_json else 0

    def __call__(self, text: str) -> str:
        for form in self._forms:
            if form in text:
                text = text.replace(form, MASK)
        return text

    def __bool__(self) -> bool:
        return bool(self._forms)

    def found_in(self, raw: bytes) -> bool:
        """Whether any form occurs in `raw` (JSON bytes, so escaped forms are looked for too)."""
        if len(raw) < self._shortest:
            return False
        if len(raw) <= _SMALL:  # a str search costs a fifth of a bytes one: decode and look
            text = raw.decode("utf-8", "replace")
            for piece in self._in_json_text:
                if piece in text:
                    return True
            return False
        for form in self._in_json:
            if form in raw:
                return True
        return False

    def json(self, raw: bytes) -> bytes:
        """A JSON value with every string in it (keys too) redacted; `raw` itself when
        nothing is found."""
        if not self._in_json or not self.found_in(raw):
            return raw
        try:
            return msgspec.json.encode(self.clean(msgspec.json.decode(raw)))
        except (msgspec.DecodeError, RecursionError):
            return self(raw.decode("utf-8", "replace")).encode()

    def clean(self, value: Any) -> Any:
        """A decoded JSON value with every string (keys too) redacted."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, list):
            return [self.clean(v) for v in value]
        if isinstance(value, dict):
            return {self(k): self.clean(v) for k, v in value.items()}
        return value


def url_credentials(url: str) -> list[str]:
    """The secrets inside an address: user and password, and the values of query
    parameters with credential names (`?key=`, `?token=`...), as written and decoded."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return []
    found = [p for p in (parts.username, parts.password) if p]
    for pair in parts.query.split("&"):
        name, _, value = pair.partition("=")
        if value and CREDENTIAL_NAME.search(urllib.parse.unquote_plus(name)):
            found += [value, urllib.parse.unquote_plus(value)]
    return found


def _random_looking(value: str) -> bool:
    return (len(value) >= 12 and not any(c.isspace() for c in value) and value[:1] not in "/~."
            and "://" not in value and any(c.isalpha() for c in value) and any(c.isdigit() for c in value))


def answer_secrets(named: Mapping[str, str]) -> list[str]:
    """Of configured name -> value pairs (env, headers), the values to hide in answers:
    credential names (`*_KEY`, `*TOKEN*`, `Authorization`...), values that look random
    (12+ characters mixing letters and digits, not a path or address), and the
    credentials inside a value (`Bearer X`, `Basic` pairs, an address's user info and
    credential parameters). Ordinary values (`production`, `/usr/bin`, `UTC`) are left
    alone: an answer may rightly hold them."""
    found: list[str] = []
    for name, value in named.items():
        if not value:
            continue
        if CREDENTIAL_NAME.search(name) or _random_looking(value):
            found.append(value)
        scheme, _, rest = value.strip().partition(" ")
        if rest.strip() and scheme.lower() in ("bearer", "basic", "token"):
            found.append(rest.strip())
            if scheme.lower() == "basic":
                found += _basic_pair(rest.strip())
        found += url_credentials(value) if "://" in value else []
    return found


def _basic_pair(encoded: str) -> list[str]:
    import base64  # a Basic credential is rare: start-up does not load base64 for it

    try:
        pair = base64.b64decode(encoded, validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return []
    return [p for p in (pair, pair.partition(":")[2]) if p]


class RedactingFilter(logging.Filter):
    """Formats each record once, redacted, so no argument can carry a secret out."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        if self.redactor:
            record.msg = self.redactor(record.getMessage())
            record.args = None
            if record.exc_info:
                record.exc_text = self.redactor(logging.Formatter().formatException(record.exc_info))
                record.exc_info = None
        return True
