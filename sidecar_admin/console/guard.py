"""Who may use the console, and the headers every console answer carries.

Owns: the operator's login (the bearer token typed into a form, compared in constant
time by the front's own rule), the server-side sessions it opens (a random id in an
HttpOnly, SameSite=Strict cookie scoped to `/console`, Secure over https, with an idle
and an absolute expiry), the CSRF token bound to each session (and the one-time token
of the login form, bound to a short pre-login cookie), the Origin check of every POST,
and the strict Content-Security-Policy. Refuses a page without a live session (to the
login form), and any POST whose Origin is missing or foreign or whose CSRF token is
missing or wrong (403).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from sidecar.front.http.admission import caller_identity

__all__ = ["Act", "COOKIE", "PRE_COOKIE", "Guard", "ConsoleSession", "Page", "Route", "SECURITY_HEADERS",
           "security_headers"]

COOKIE = "omb_console"
PRE_COOKIE = "omb_console_login"
IDLE_SECONDS = 60 * 60.0
LIFE_SECONDS = 12 * 60 * 60.0
MAX_SESSIONS = 64
FAILED_LOGINS = 10  # at most this many wrong tokens a minute, from anyone: then 429 until the minute passes
SECURITY_HEADERS = {
    "Content-Security-Policy": ("default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
                                "frame-ancestors 'none'; base-uri 'none'"),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # no-referrer would make a browser send `Origin: null` with our own forms
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}


@dataclass
class ConsoleSession:
    ident: str = field(repr=False)
    csrf: str = field(repr=False)
    opened: float
    seen: float

    @property
    def who(self) -> str:
        """How the audit names this session: `console:` and a digest, never the id itself."""
        return "console:" + hashlib.sha256(self.ident.encode()).hexdigest()[:12]


# A page answers a logged-in GET with HTML; an act answers a checked POST (HTML, or a
# response of its own); a route is what aiohttp calls.
Page = Callable[[web.Request, "ConsoleSession"], Awaitable[str]]
Act = Callable[[web.Request, "ConsoleSession", dict[str, Any]], Awaitable["str | web.StreamResponse"]]
Route = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Guard:
    def __init__(self, tokens: Iterable[str], secure: bool, clock: Callable[[], float] = time.time) -> None:
        self._tokens = tuple(tokens)
        self.secure = secure  # the console's public address is https: cookies say Secure
        self.clock = clock
        self.sessions: dict[str, ConsoleSession] = {}
        self._failures: deque[float] = deque(maxlen=FAILED_LOGINS)

    # -- login ------------------------------------------------------------------------

    def token_matches(self, typed: str) -> bool:
        if caller_identity(f"Bearer {typed.strip()}", self._tokens) is not None:
            return True
        self._failures.append(self.clock())
        return False

    def guessing(self) -> bool:
        """Too many wrong tokens in the last minute: the form refuses every try for a while,
        so the token cannot be guessed at the speed of the network."""
        return len(self._failures) == FAILED_LOGINS and self.clock() - self._failures[0] < 60.0

    def open_session(self) -> ConsoleSession:
        now = self.clock()
        self._expire(now)
        while len(self.sessions) >= MAX_SESSIONS:  # the oldest goes first
            self.sessions.pop(min(self.sessions, key=lambda k: self.sessions[k].seen))
        session = ConsoleSession(secrets.token_urlsafe(32), secrets.token_urlsafe(32), now, now)
        self.sessions[session.ident] = session
        return session

    def close_session(self, request: web.Request) -> None:
        self.sessions.pop(request.cookies.get(COOKIE, ""), None)

    def session_of(self, request: web.Request) -> ConsoleSession | None:
        """The live session the request's cookie names; its idle time starts again."""
        now = self.clock()
        session = self.sessions.get(request.cookies.get(COOKIE, ""))
        if session is None:
            return None
        if now - session.seen > IDLE_SECONDS or now - session.opened > LIFE_SECONDS:
            self.sessions.pop(session.ident, None)
            return None
        session.seen = now
        return session

    def _expire(self, now: float) -> None:
        for ident, session in list(self.sessions.items()):
            if now - session.seen > IDLE_SECONDS or now - session.opened > LIFE_SECONDS:
                del self.sessions[ident]

    # -- cookies ----------------------------------------------------------------------

    def set_cookie(self, response: web.StreamResponse, name: str, value: str, request: web.Request,
                   max_age: float = LIFE_SECONDS) -> None:
        response.set_cookie(name, value, path="/console", httponly=True, samesite="Strict",
                            secure=self.secure or request.secure, max_age=int(max_age))

    def drop_cookie(self, response: web.StreamResponse, name: str) -> None:
        response.del_cookie(name, path="/console")

    # -- cross-site requests --------------------------------------------------------------

    @staticmethod
    def same_origin(request: web.Request) -> bool:
        """A POST must say where it comes from, and that must be this very host."""
        origin = request.headers.get("Origin")
        if not origin or origin == "null":
            return False
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and parts.netloc.lower() == request.host.lower()

    @staticmethod
    def csrf_matches(expected: str, given: object) -> bool:
        return isinstance(given, str) and bool(given) and hmac.compare_digest(given.encode(), expected.encode())


def security_headers(response: web.StreamResponse) -> None:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
