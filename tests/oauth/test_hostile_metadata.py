"""Hostile sign-in answers (issue 22, class 6): wrong JSON types, 60,000-deep JSON, huge
bodies and non-JSON in the protected resource metadata, the authorization server metadata
or the token answer end in a named error (SignInError words), never a traceback.

Hypothesis generates the documents; each is served over real HTTP on 127.0.0.1
(tests/oauth/hostile_auth.py, in a thread of its own) to the sidecar's real discovery and
client-credentials grant.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sidecar.config import parse_server
from sidecar.upstream.oauth.documents import MAX_DEPTH, read_document
from sidecar.wire.depth import nesting_depth as nesting
from sidecar.upstream.oauth.exchange import OAuthHttp
from sidecar.upstream.oauth.flow import SignInError
from sidecar.upstream.oauth.grants import client_credentials
from sidecar.upstream.oauth.locate import locate
from tests.oauth.hostile_auth import ASM, PRM, TOKEN, Canned, HostileAuth, hostile_auth, valid_documents

SECRET = "client-secret-canary-7781"
KEYS = {
    PRM: ["resource", "authorization_servers", "scopes_supported"],
    ASM: ["issuer", "token_endpoint", "authorization_endpoint", "registration_endpoint", "revocation_endpoint",
          "code_challenge_methods_supported", "token_endpoint_auth_methods_supported", "scopes_supported",
          "response_types_supported", "grant_types_supported"],
    TOKEN: ["access_token", "token_type", "expires_in", "refresh_token", "scope", "error"],
}
RAW = [b"[" * 60000, b'{"a":' * 60000 + b"1" + b"}" * 60000, b"", b"not json", b"\xff\xfe\x00", b"NaN",
       b"1e400", b"9" * 5000, b'"\\ud800"', b"null", b"[]", b"true", b'{"a":1,"a":2}', b"{" * (MAX_DEPTH + 1)]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)


@st.composite
def hostile_answer(draw: st.DrawFn) -> tuple[str, Canned]:
    """One slot (PRM, ASM, TOKEN) and what it answers: raw bytes, a wrong top-level type,
    a valid document with fields of any type, or a huge body."""
    slot = draw(st.sampled_from([PRM, ASM, TOKEN]))
    kind = draw(st.sampled_from(["raw", "top", "fields", "huge"]))
    if kind == "raw":
        return slot, Canned(draw(st.sampled_from([200, 400])), draw(st.sampled_from(RAW)), draw(st.booleans()))
    if kind == "top":
        return slot, Canned(200, json.dumps(draw(json_values)).encode())
    if kind == "huge":
        return slot, Canned(200, b'{"pad": "' + b"x" * draw(st.integers(65_000, 400_000)) + b'"}', draw(st.booleans()))
    return slot, Canned(200, b"")  # filled in by the test from the valid document


@pytest.fixture(scope="module")
def site() -> Iterator[HostileAuth]:
    """The hostile site, served by an event loop in its own thread for the whole module."""
    loop = asyncio.new_event_loop()
    ready: asyncio.Future[HostileAuth] = loop.create_future()
    stop = asyncio.Event()

    async def serve() -> None:
        async with hostile_auth() as served:
            ready.set_result(served)
            await stop.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    served = asyncio.run_coroutine_threadsafe(asyncio.wait_for(asyncio.shield(ready), 10), loop).result(15)
    try:
        yield served
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(10)


def unattended(site: HostileAuth) -> Any:
    return parse_server("hostile", {"type": "http", "url": site.url, "oauth": {
        "clientId": "app", "clientSecret": SECRET, "grant": "client_credentials"}})


async def sign_in_once(site: HostileAuth) -> str:
    """Discovery and the client-credentials grant, as `signin` and the refresh path run them."""
    server = unattended(site)
    http = OAuthHttp(site.url)
    try:
        found = await locate(server, http)
        tokens = await client_credentials(server, http, found.auth, found.resource.resource, {})
        return tokens.access_token
    finally:
        await http.close()


def test_the_valid_site_signs_in(site: HostileAuth) -> None:
    site.reset()
    assert asyncio.run(sign_in_once(site)) == "at-hostile-canary"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(answer=hostile_answer(), fields=st.dictionaries(st.sampled_from(sorted({k for v in KEYS.values() for k in v})),
                                                      json_values, min_size=1, max_size=4))
def test_hostile_answers_end_in_words(site: HostileAuth, answer: tuple[str, Canned], fields: dict[str, Any]) -> None:
    site.reset()
    slot, canned = answer
    if not canned.body:
        document = json.loads(valid_documents(site.origin)[slot].body)
        document.update({k: v for k, v in fields.items() if k in KEYS[slot]} or fields)
        canned = Canned(200, json.dumps(document).encode())
    site.answers[slot] = canned
    try:
        asyncio.run(sign_in_once(site))
    except SignInError as refused:
        assert refused.words.isprintable() and len(refused.words) < 400, refused.words
        assert SECRET not in refused.words


@settings(max_examples=100, deadline=None)
@given(value=json_values, depth=st.integers(0, 70_000))
def test_nesting_is_measured_without_recursion(value: Any, depth: int) -> None:
    body = json.dumps(value).encode()
    deep = b"[" * depth + body + b"]" * depth
    assert nesting(deep) == depth + nesting(body)
    if depth + nesting(body) > MAX_DEPTH:
        assert read_document(deep) is None
    else:  # compared as text: NaN is not equal to itself
        assert json.dumps(read_document(deep)) == json.dumps(json.loads(deep))
