"""The issuer rule on its own (sidecar/upstream/oauth/issuers.py), over generated issuers:
a configured credential is refused for any issuer but its own (configured or pinned), in
words naming both and never the secret; the first grant pins, later ones never move the
pin; a server with no configured credential is never bound."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.config import parse_server
from sidecar.upstream.oauth.issuers import IssuerMismatch, check_issuer, pin_issuer, pin_key

SECRET = "issuer-rule-secret-canary"
hosts = st.from_regex(r"[a-z][a-z0-9-]{0,12}(\.[a-z]{2,6}){1,2}", fullmatch=True)
issuers = st.builds(lambda host, port, path: f"https://{host}{port}{path}", hosts,
                    st.sampled_from(["", ":8443", ":443"]), st.sampled_from(["", "/", "/tenant", "/realms/a"]))


def server(configured: str | None = None, secret: bool = True, **extra: Any) -> Any:
    oauth: dict[str, Any] = {"clientId": "app", **extra}
    if secret:
        oauth["clientSecret"] = SECRET
    if configured:
        oauth["issuer"] = configured
    return parse_server("corp", {"type": "http", "url": "https://mcp.example.com/mcp", "oauth": oauth})


@settings(max_examples=300, deadline=None)
@given(bound=issuers, named=issuers, configured=st.booleans())
def test_only_the_bound_issuer_gets_the_credential(bound: str, named: str, configured: bool) -> None:
    entry = server(bound if configured else None)
    pins: dict[str, Any] = {}
    if not configured:
        pin_issuer(entry, bound, pins)
    if bound.rstrip("/") == named.rstrip("/"):
        check_issuer(entry, named, pins)
        return
    with pytest.raises(IssuerMismatch) as refused:
        check_issuer(entry, named, pins)
    words = refused.value.words
    assert bound in words and named in words and SECRET not in words
    assert ("configured as oauth.issuer" if configured else "pinned at its first sign-in") in words


@settings(max_examples=200, deadline=None)
@given(first=issuers, later=st.lists(issuers, max_size=4))
def test_the_first_grant_pins_and_nothing_moves_it(first: str, later: list[str]) -> None:
    entry, pins = server(), {}
    for issuer in [first, *later]:
        pin_issuer(entry, issuer, pins)
    assert list(pins) == [pin_key(entry)] and pins[pin_key(entry)]["issuer"] == first
    configured, public = server("https://login.example.com"), server(secret=False)
    for other in (configured, public):
        empty: dict[str, Any] = {}
        pin_issuer(other, first, empty)
        assert empty == {}
        for issuer in later:
            if other is public:
                check_issuer(other, issuer, pins)  # a public client carries no credential to bind
