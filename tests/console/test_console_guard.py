"""The console's guard and markup without sockets: sessions expire (idle and absolute),
their ids and CSRF tokens are random and long, the audit names a session by a digest,
a foreign or missing Origin is refused, and anything from outside is escaped and
redacted before it reaches a page."""

from __future__ import annotations

import html
from typing import Any

from aiohttp.test_utils import make_mocked_request
from hypothesis import given, settings

from sidecar.trust.pins import Change, Finding
from sidecar.redact import Redactor
from sidecar_admin.console.guard import COOKIE, IDLE_SECONDS, LIFE_SECONDS, SECURITY_HEADERS, Guard
from sidecar_admin.console.pages import Escape, layout
from sidecar_admin.console.screens import held_body, servers_body
from sidecar_admin.console.state import ServerRow
from tests.test_redact_forms import SECRETS, WORDS, hides, shapes

TOKEN = "operator-token-0123456789abcdef"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _request(cookie: str = "", origin: str | None = None, host: str = "127.0.0.1:8765") -> Any:
    headers = {"Host": host, **({"Cookie": f"{COOKIE}={cookie}"} if cookie else {}),
               **({"Origin": origin} if origin is not None else {})}
    return make_mocked_request("POST", "/console/add", headers=headers)


def test_a_session_lives_while_used_and_ends_idle_or_old() -> None:
    clock = Clock()
    guard = Guard([TOKEN], secure=False, clock=clock)
    assert guard.token_matches(TOKEN) and not guard.token_matches(TOKEN[:-1]) and not guard.token_matches("")
    session = guard.open_session()
    assert len(session.ident) >= 40 and len(session.csrf) >= 40 and session.ident != session.csrf
    assert session.ident not in session.who and session.who.startswith("console:")
    clock.now += IDLE_SECONDS - 1
    assert guard.session_of(_request(session.ident)) is session
    clock.now += IDLE_SECONDS + 1
    assert guard.session_of(_request(session.ident)) is None  # idle too long
    other = guard.open_session()
    for _ in range(int(LIFE_SECONDS // (IDLE_SECONDS / 2)) + 1):
        clock.now += IDLE_SECONDS / 2
        guard.session_of(_request(other.ident))
    assert guard.session_of(_request(other.ident)) is None  # too old, however busy
    assert guard.session_of(_request("forged")) is None and guard.session_of(_request()) is None


def test_only_this_hosts_origin_may_post() -> None:
    assert Guard.same_origin(_request(origin="http://127.0.0.1:8765"))
    for origin in (None, "null", "http://127.0.0.1:9999", "http://evil.example", "file://", "127.0.0.1:8765"):
        assert not Guard.same_origin(_request(origin=origin)), origin
    assert Guard.csrf_matches("abc", "abc") and not Guard.csrf_matches("abc", "abd")
    assert not Guard.csrf_matches("abc", None) and not Guard.csrf_matches("abc", "")


def test_the_headers_forbid_outside_loads_framing_and_sniffing() -> None:
    policy = SECURITY_HEADERS["Content-Security-Policy"]
    for part in ("default-src 'none'", "style-src 'self'", "img-src 'self'", "form-action 'self'",
                 "frame-ancestors 'none'", "base-uri 'none'"):
        assert part in policy
    assert "script-src" not in policy and "unsafe" not in policy
    assert SECURITY_HEADERS["X-Frame-Options"] == "DENY"


def test_markup_and_secrets_from_outside_are_escaped_and_hidden() -> None:
    esc = Escape(Redactor(["sk-live-secret-9876"]))
    hostile = '<script>alert(1)</script> "quoted" sk-live-secret-9876'
    row = ServerRow("evil", "left out", hostile, None, None, None, ("iris",), False, False)
    page = layout("Servers", servers_body(esc, "csrf-token", [row], gateway=True), "csrf-token")
    assert "<script>" not in page and "&lt;script&gt;" in page and "sk-live-secret-9876" not in page
    change = Change(tool="t<img src=x>", kind="flagged", old_digest=None, new_digest="d" * 64,
                    findings=(Finding(rule="hidden-instructions", field="description", excerpt="<b>obey</b>"),))
    tool = {"name": "t<img src=x>", "description": "<b>obey</b> sk-live-secret-9876", "inputSchema": {"type": "object"}}
    held = held_body(esc, "csrf-token", [("evil", [(change, tool)], {})])
    assert "<img" not in held and "<b>" not in held and "sk-live-secret-9876" not in held


def test_wrong_tokens_in_a_row_close_the_door_for_a_minute() -> None:
    from sidecar_admin.console.guard import FAILED_LOGINS

    clock = Clock()
    guard = Guard([TOKEN], secure=False, clock=clock)
    for _ in range(FAILED_LOGINS - 1):
        assert not guard.token_matches("wrong-token-0123456789")
    assert not guard.guessing()
    assert not guard.token_matches("wrong-token-0123456789")
    assert guard.guessing()
    clock.now += 61
    assert not guard.guessing() and guard.token_matches(TOKEN)


@settings(max_examples=200, deadline=None)
@given(SECRETS, WORDS, WORDS)
def test_any_outside_text_is_inert_and_hides_its_secret(secret: str, before: str, after: str) -> None:
    """Whatever an upstream or a config says (markup, quotes, a secret in any of the
    redactor's shapes), the page gets text that opens no tag or attribute and hides the secret."""
    esc = Escape(Redactor([secret]))
    for shape in shapes(secret, before + "<i x=\"", "\">" + after):
        cell = esc(shape)
        assert not set(cell) & set("<>\"'"), cell
        assert hides(html.unescape(cell), secret), shape
