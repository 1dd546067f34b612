import base64
import json
import logging
import urllib.parse

import pytest

from sidecar.redact import MASK, RedactingFilter, Redactor

SECRET = "canary-Zx9/+q=s3cr3t"


@pytest.mark.parametrize(
    "form",
    [SECRET, json.dumps(SECRET)[1:-1], urllib.parse.quote(SECRET, safe=""), urllib.parse.quote_plus(SECRET),
     base64.b64encode(SECRET.encode()).decode(), base64.urlsafe_b64encode(SECRET.encode()).decode()],
)
def test_every_common_encoding_is_hidden(form: str) -> None:
    text = Redactor([SECRET])(f"before {form} after")
    assert form not in text and MASK in text


def test_log_records_are_redacted_with_their_arguments() -> None:
    record = logging.LogRecord("x", logging.WARNING, __file__, 1, "token %s in %r", (SECRET, {"k": SECRET}), None)
    RedactingFilter(Redactor([SECRET])).filter(record)
    assert SECRET not in record.getMessage()


def test_short_values_are_not_treated_as_secrets() -> None:
    assert Redactor(["ab"])("abc") == "abc"
