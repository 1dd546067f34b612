"""The confirmation message a person reads cannot be forged by the model (issue 22, class 7;
RELIABILITY rule 18): its lines are exactly the header and one line per argument, every
argument name appears, no value's text can begin a line or hide characters, long values
are cut with their length stated. Hypothesis over arbitrary arguments, plus a corpus of
the known tricks (newlines, CR, ANSI, bidi overrides, zero-width, U+2028/2029, padding,
a forged "checked by the sidecar" line, 13+ arguments)."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.gate.confirmation.stage import confirmation_form
from sidecar.gate.confirmation.form import SHOWN_VALUES, VALUE_CHARS
from sidecar.redact import Redactor

HEADER_LINES = 2
FORGED = "This call was checked by the sidecar: read-only"
TRICKS = [
    f"ok\n{FORGED}", f"ok\r{FORGED}", f"ok\r\n\r\n{FORGED}", f"\x1b[2K\x1b[1A{FORGED}", f"\x1b]8;;x\x07{FORGED}",
    f"\u202e{FORGED}\u202c", f"\u2066{FORGED}\u2069", f"\u200b\u200d\ufeff{FORGED}", f"ok\u2028{FORGED}",
    f"ok\u2029{FORGED}", f"ok\x85{FORGED}", f"ok\x0b\x0c\x1c\x1d\x1e{FORGED}", "ok" + " " * 300 + FORGED,
    "ok" + "\u3000" * 50 + "\u00a0" * 50 + FORGED, f"ok\u3164\u2800{FORGED}", f"\u061c\u200e\u200f{FORGED}",
    '"}\n' + FORGED, "x" * 5000, "\U0001f600" * 200,
]
# What would start a new line in some renderer, or hide/reorder text in it.
_BREAKS = {"\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"}


def _form_lines(arguments: dict[str, Any], redact: Redactor | None = None) -> list[str]:
    message = confirmation_form("s__write", "s", arguments, redact or Redactor())["message"]
    assert isinstance(message, str)
    return message.split("\n")


def _hidden(char: str) -> bool:
    if char == " " or char.isascii() and char.isprintable():
        return False
    return unicodedata.category(char) in {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"}


def _check(arguments: dict[str, Any]) -> list[str]:
    lines = _form_lines(arguments)
    message = "\n".join(lines)
    assert len(message.splitlines()) == len(lines) == HEADER_LINES + len(arguments), message
    assert not any(_hidden(c) or c in _BREAKS for line in lines for c in line), message
    for line, name in zip(lines[HEADER_LINES:], arguments, strict=True):
        prefix = f"  {json.dumps(name, ensure_ascii=False)}"
        assert line.startswith("  \""), line
        if len(prefix) < 60 and name.isprintable() and name.isascii() and "   " not in name:
            assert line.startswith(prefix + ": "), (line, name)
    assert "   " not in message  # no run of spaces long enough to pad text out of sight
    return lines


_text = st.text(st.characters(codec="utf-8"), max_size=60) | st.sampled_from(TRICKS)
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4), max_leaves=8)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(_text, _json_values, max_size=20))
def test_no_argument_shapes_the_message(arguments: dict[str, Any]) -> None:
    _check(arguments)


def test_the_corpus_of_tricks_cannot_forge_a_line() -> None:
    for start in range(0, len(TRICKS), SHOWN_VALUES):  # every trick as a shown value
        values = {f"a{i}": trick for i, trick in enumerate(TRICKS[start:start + SHOWN_VALUES])}
        lines = _check(values)
        assert not any(line.lstrip().startswith(FORGED) for line in lines)
        assert all(line.startswith(f'  "a{i}": "') for i, line in enumerate(lines[HEADER_LINES:]))
    names = {trick[:30]: trick for trick in TRICKS}  # the names are hostile too
    assert not any(line.lstrip().startswith(FORGED) for line in _check(names))


def test_every_argument_is_named_even_past_the_shown_values() -> None:
    arguments = {f"arg{i:02d}": f"value {i}" for i in range(SHOWN_VALUES + 9)}
    lines = _check(arguments)
    assert f"({SHOWN_VALUES + 9})" in lines[1] and f"the other 9 by name only" in lines[1]
    for i, line in enumerate(lines[HEADER_LINES:]):
        assert line.startswith(f'  "arg{i:02d}": ')
        assert (f'"value {i}"' in line) is (i < SHOWN_VALUES)


def test_long_values_are_cut_with_their_length_and_secrets_never_half_shown() -> None:
    secret = "canary-" + "s" * 150
    lines = _form_lines({"note": "x" * 5000, "blob": {"k": secret}}, Redactor([secret]))
    assert "(cut: 5,000 characters in all)" in lines[2] and len(lines[2]) < VALUE_CHARS + 60
    assert "canary" not in "\n".join(lines)


def test_nested_values_are_compact_json_on_one_line() -> None:
    lines = _form_lines({"deep": {"a": ["x\ny", {"b": "\u202e"}]}})
    assert lines[2] == '  "deep": {"a":["x\\ny",{"b":"\\u202e"}]}'
