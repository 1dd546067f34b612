"""Generated secrets in generated shapes: whatever the secret (length, characters) and
wherever it sits (alone, inside text, inside a base64 string at any byte alignment,
percent-encoded, JSON-escaped once or twice), nothing that decodes back to it survives
redaction, in text (logs, printed lines) or in a JSON answer (which stays valid JSON).

The checks are oracles independent of how the redactor works: decode what is left (every
base64 run at every offset, percent-decoding, JSON-decoding) and look for the secret."""

from __future__ import annotations

import base64
import json
import re
import urllib.parse
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.redact import MASK, Redactor, answer_secrets, url_credentials

_RUN = re.compile(r"[A-Za-z0-9+/_=-]{4,}")
_ALPHABET = st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="\0")
SECRETS = st.text(_ALPHABET, min_size=7, max_size=48)
WORDS = st.text(st.characters(codec="ascii", exclude_characters="\0"), max_size=9)


def base64_hides(text: str, secret: str) -> bool:
    """No base64 run in `text`, read from any of its four offsets, decodes to hold the secret."""
    wanted = secret.encode()
    for run in _RUN.findall(text):
        plain = run.replace("-", "+").replace("_", "/").rstrip("=")
        for offset in range(4):
            piece = plain[offset:]
            piece = piece[: len(piece) - len(piece) % 4]
            try:
                if wanted in base64.b64decode(piece):
                    return False
            except ValueError:
                continue
    return True


def hides(text: str, secret: str) -> bool:
    """Nothing in `text` decodes to the secret; the mask is opaque (a secret such as
    `[redact` or `ted] x` would otherwise be found in the mask and its neighbours)."""
    text = text.replace(MASK, "\0")
    decoded = {text, urllib.parse.unquote(text), urllib.parse.unquote_plus(text)}
    try:
        decoded.add(json.loads(f'"{text}"'))
    except ValueError:
        pass
    return all(secret not in d for d in decoded) and base64_hides(text, secret)


def shapes(secret: str, before: str, after: str) -> list[str]:
    whole = before + secret + after
    raw = whole.encode()
    return [
        secret, whole,
        json.dumps({"v": whole}), json.dumps(json.dumps({"v": whole})), json.dumps(whole, ensure_ascii=False),
        urllib.parse.quote(whole, safe=""), urllib.parse.quote_plus(whole), urllib.parse.quote(whole).lower(),
        base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode().rstrip("="),
        "Basic " + base64.b64encode(f"{before}:{secret}".encode()).decode(),
    ]


@settings(max_examples=300, deadline=None)
@given(SECRETS, WORDS, WORDS)
def test_no_shape_of_a_generated_secret_survives_in_text(secret: str, before: str, after: str) -> None:
    redact = Redactor([secret])
    for shape in shapes(secret, before, after):
        assert hides(redact(f"log line: {shape} ."), secret), shape


@settings(max_examples=200, deadline=None)
@given(SECRETS, WORDS, WORDS)
def test_a_json_answer_is_cleaned_and_stays_json(secret: str, before: str, after: str) -> None:
    redact = Redactor([secret])
    answer = {"content": [{"type": "text", "text": s} for s in shapes(secret, before, after)],
              "structuredContent": {before + secret: [secret, {"deep": after + secret}]}, "isError": False}
    cleaned = msgspec.json.decode(redact.json(msgspec.json.encode(answer)))

    def strings(value: Any) -> list[str]:
        if isinstance(value, str):
            return [value]
        if isinstance(value, list):
            return [s for v in value for s in strings(v)]
        if isinstance(value, dict):
            return [s for k, v in value.items() for s in (k, *strings(v))]
        return []

    assert all(hides(s, secret) for s in strings(cleaned))


def test_an_answer_without_secrets_is_returned_as_is() -> None:
    raw = msgspec.json.encode({"content": [{"type": "text", "text": "nothing to hide " * 100}]})
    assert Redactor(["sk-live-0123456789"]).json(raw) is raw
    assert Redactor().json(raw) is raw


@given(st.integers(min_value=0, max_value=11), SECRETS)
def test_base64_of_user_and_secret_is_hidden_for_every_user_length(user_length: int, secret: str) -> None:
    pair = base64.b64encode(("u" * user_length + ":" + secret).encode()).decode()
    assert base64_hides(Redactor([secret])(f"Authorization: Basic {pair}"), secret)


def test_answer_secrets_pick_credentials_not_ordinary_values() -> None:
    picked = answer_secrets({
        "GITHUB_TOKEN": "ghp_abc", "NODE_ENV": "production", "TZ": "UTC", "PATH": "/usr/local/bin:/usr/bin",
        "TENANT": "a8f3k2m9q7x1z5", "Authorization": "Bearer tok-123456", "DB": "postgres://me:pa55word@db/x",
    })
    assert {"ghp_abc", "a8f3k2m9q7x1z5", "Bearer tok-123456", "tok-123456", "pa55word"} <= set(picked)
    assert not {"production", "UTC", "/usr/local/bin:/usr/bin"} & set(picked)


def test_url_credentials_are_found_as_written_and_decoded() -> None:
    found = url_credentials("https://api.example.com/mcp?v=2&key=s%2Bcr%3Dt&access_token=abc+def")
    assert {"s%2Bcr%3Dt", "s+cr=t", "abc+def", "abc def"} <= set(found) and "2" not in found


@given(st.text(st.characters(), min_size=4, max_size=30) | st.just("abc\ud800defgh"))
def test_any_text_can_be_a_secret(secret: str) -> None:
    """Lone surrogates included (a JSON config may hold one): the redactor never raises."""
    redact = Redactor([secret])
    assert secret not in redact(f"<{secret}>").replace(MASK, "\0")
    redact.json(msgspec.json.encode({"v": secret.encode("utf-8", "replace").decode()}))
