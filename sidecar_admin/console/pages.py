"""The console's HTML: one layout and the small pieces every page is made of.

Owns the markup and the escaping. Every value that came from the config, an upstream,
a check or a call passes `Escape` (the process's redactor first, then HTML escaping), so
neither a secret nor markup from outside reaches the page. Nothing here loads anything
from outside the sidecar: one stylesheet at `/console/static/console.css`, no script.
Forms are plain POSTs carrying the session's CSRF token, so every page works without
JavaScript.
"""

from __future__ import annotations

import html
import time
from collections.abc import Iterable, Sequence

from sidecar.redact import Redactor

__all__ = ["Escape", "layout", "login_page", "post_form", "table", "when", "notice"]

_NAV = (("/console/servers", "Servers"), ("/console/add", "Add a server"), ("/console/held", "Held tools"),
        ("/console/calls", "Calls"))


class Escape:
    """Redact, then escape for HTML text or an attribute value."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor

    def __call__(self, value: object) -> str:
        return html.escape(self.redactor(str(value)), quote=True)


def layout(title: str, body: str, csrf: str | None, *, refresh: int | None = None) -> str:
    """A whole page; `title` is already escaped. Signed in (`csrf` given): the menu and Log out."""
    head = f'<meta http-equiv="refresh" content="{refresh}">' if refresh else ""
    menu = ""
    if csrf is not None:
        links = " ".join(f'<a href="{href}">{words}</a>' for href, words in _NAV)
        menu = (f"<nav>{links} {post_form('/console/logout', csrf, '', 'Log out', css='inline')}</nav>")
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{title} · omb-sidecar</title>{head}"
            "<link rel=\"stylesheet\" href=\"/console/static/console.css\"></head>"
            f"<body><header><span class=\"brand\">omb-sidecar</span>{menu}</header>"
            f"<main><h1>{title}</h1>\n{body}\n</main></body></html>\n")


def post_form(action: str, csrf: str, fields: str, button: str, *, css: str = "") -> str:
    """A POST form with the CSRF token; `action`, `fields` and `button` are already safe."""
    cls = f' class="{css}"' if css else ""
    return (f'<form method="post" action="{action}"{cls}>'
            f'<input type="hidden" name="csrf" value="{html.escape(csrf, quote=True)}">'
            f'{fields}<button type="submit">{button}</button></form>')


def login_page(login_csrf: str, words: str = "") -> str:
    fields = ('<label for="token">The operator\'s token</label>'
              '<input id="token" name="token" type="password" autocomplete="off" required autofocus>')
    said = notice(words, "bad") if words else ""
    body = (f"{said}<p>Sign in with the bearer token the sidecar's HTTP front was started with "
            f"(its <code>--token-file</code> or <code>--token-env</code>).</p>"
            + post_form("/console/login", login_csrf, fields, "Log in", css="stack"))
    return layout("Log in", body, None)


def notice(words: str, kind: str = "ok") -> str:
    """A box of words (already escaped): `ok`, `bad` or `info`."""
    return f'<p class="notice {kind}">{words}</p>'


def table(head: Sequence[str], rows: Iterable[Sequence[str]], css: str = "") -> str:
    """A table of already-escaped cells."""
    cls = f' class="{css}"' if css else ""
    top = "".join(f"<th>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table{cls}><thead><tr>{top}</tr></thead><tbody>{body}</tbody></table>"


def when(moment: float | None) -> str:
    """A moment as the operator reads it (UTC, to the second), or a dash."""
    if not moment:
        return "—"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(moment))
