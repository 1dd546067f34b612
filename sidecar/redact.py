"""Redaction of secret values wherever text leaves the process (logs, errors to the model).

A secret is hidden in its plain form and in the encodings it is most often found in:
JSON-escaped, percent-encoded, and base64 (alone, or inside `user:secret` pairs).
"""

from __future__ import annotations

import base64
import json
import logging
import urllib.parse
from collections.abc import Iterable

__all__ = ["Redactor", "RedactingFilter", "MASK"]

MASK = "[redacted]"
_MIN_SECRET = 4


def _forms(secret: str) -> set[str]:
    raw = secret.encode("utf-8", "replace")
    forms = {
        secret,
        json.dumps(secret)[1:-1],
        urllib.parse.quote(secret, safe=""),
        urllib.parse.quote_plus(secret),
        base64.b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode(),
        base64.b64encode(raw).decode().rstrip("="),
    }
    return {f for f in forms if len(f) >= _MIN_SECRET}


class Redactor:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._forms: list[str] = []
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        found = set(self._forms)
        for secret in secrets:
            if len(secret) >= _MIN_SECRET:
                found |= _forms(secret)
        self._forms = sorted(found, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for form in self._forms:
            if form in text:
                text = text.replace(form, MASK)
        return text

    def __bool__(self) -> bool:
        return bool(self._forms)


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
