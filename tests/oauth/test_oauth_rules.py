"""The pure rules of sign-in, and the sealed token file on disk."""

from __future__ import annotations

import asyncio
import base64
import json
import os
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from sidecar.upstream.oauth.choices import (
    AuthServer,
    needs_s256,
    plan_client,
    read_auth_server,
    read_resource,
    registration_method,
    token_auth_method,
)
from sidecar.upstream.oauth.discovery import (
    authorization_server_addresses,
    callback_port,
    canonical_resource,
    choose_scopes,
    parse_challenge,
    protected_resource_addresses,
    union_scopes,
)
from sidecar.upstream.oauth.flow import FLOW_SECONDS, SignInError, start_flow
from sidecar.upstream.oauth.sealed import TokenFile, TokenFileError


def test_the_challenge_is_read_among_other_schemes() -> None:
    found = parse_challenge('Basic realm="x", Bearer error="insufficient_scope", scope="a b", '
                            'resource_metadata="https://h/.well-known/oauth-protected-resource/mcp", DPoP algs="ES256"')
    assert found is not None
    assert (found.error, found.scope, found.resource_metadata) == (
        "insufficient_scope", "a b", "https://h/.well-known/oauth-protected-resource/mcp")
    assert parse_challenge('Basic realm="x"') is None


def test_addresses_in_the_spec_order() -> None:
    assert protected_resource_addresses("https://h/a/mcp") == [
        "https://h/.well-known/oauth-protected-resource/a/mcp", "https://h/.well-known/oauth-protected-resource"]
    assert authorization_server_addresses("https://as.example/tenant") == [
        "https://as.example/.well-known/oauth-authorization-server/tenant",
        "https://as.example/.well-known/openid-configuration/tenant",
        "https://as.example/tenant/.well-known/openid-configuration"]
    assert authorization_server_addresses("https://as.example") == [
        "https://as.example/.well-known/oauth-authorization-server",
        "https://as.example/.well-known/openid-configuration"]


def test_canonical_address_and_port() -> None:
    assert canonical_resource("HTTPS://Host.Example:443/mcp/#x") == "https://host.example/mcp"
    assert canonical_resource("http://h:8080/mcp?x=1") == "http://h:8080/mcp?x=1"
    port = callback_port("https://host.example/mcp")
    assert port == callback_port("https://HOST.example:443/mcp/") and 20000 <= port < 32000  # below every system's outgoing-connection ports
    assert port != callback_port("https://host.example/other")


def test_scopes_configured_then_challenge_then_supported() -> None:
    assert choose_scopes("b  a", "c", ["d"]) == "b a"
    assert choose_scopes(None, "c", ["d"]) == "c"
    assert choose_scopes(None, None, ["d", "e"]) == "d e"
    assert choose_scopes(None, None, None) is None
    assert union_scopes("a b", "b c") == "a b c"


def _metadata(**extra: object) -> dict[str, object]:
    return {"issuer": "https://as.example", "authorization_endpoint": "https://as.example/authorize",
            "token_endpoint": "https://as.example/token", "code_challenge_methods_supported": ["S256"], **extra}


def test_metadata_is_checked() -> None:
    server = read_auth_server(_metadata(registration_endpoint="https://as.example/register"), "https://as.example")
    assert server.s256 and server.registration_endpoint
    with pytest.raises(SignInError, match="another issuer"):
        read_auth_server(_metadata(issuer="https://evil.example"), "https://as.example")
    with pytest.raises(SignInError, match="S256"):
        needs_s256(read_auth_server(_metadata(code_challenge_methods_supported=["plain"]), "https://as.example"))
    with pytest.raises(SignInError, match="another address"):
        read_resource({"resource": "https://other.example/mcp", "authorization_servers": ["https://as.example"]},
                      "https://h.example/mcp")
    assert read_resource({"authorization_servers": ["https://as.example"]}, "https://h.example/mcp/").resource == \
        "https://h.example/mcp"


def test_who_the_client_is_and_how_it_proves_it() -> None:
    plain = read_auth_server(_metadata(), "https://as.example")
    register = read_auth_server(_metadata(registration_endpoint="https://as.example/r",
                                          client_id_metadata_document_supported=True), "https://as.example")
    assert plan_client(register, "mine", None).identity == "configured"
    assert plan_client(register, None, "https://me.example/client.json").identity == "metadata-document"
    assert plan_client(register, None, None).identity == "register"
    assert plan_client(plain, None, None).identity == "none"
    assert token_auth_method(["client_secret_post"], True) == "client_secret_post"
    assert token_auth_method(["client_secret_post", "client_secret_basic"], True) == "client_secret_basic"
    assert token_auth_method([], False) == "none"
    assert registration_method(["client_secret_basic", "none"]) == "none"
    assert isinstance(plain, AuthServer)


def test_state_is_single_use_and_expires() -> None:
    flow = start_flow(authorization_endpoint="https://as.example/authorize?tenant=1", client_id="c",
                      redirect_uri="http://127.0.0.1:5/mcp-oauth/callback", resource="https://h/mcp", scope="a",
                      issuer="https://as.example", iss_advertised=True, now=1000.0)
    query = parse_qs(urlsplit(flow.authorization_url()).query)
    assert query["code_challenge_method"] == ["S256"] and query["resource"] == ["https://h/mcp"]
    assert query["tenant"] == ["1"] and query["state"] == [flow.state]
    assert flow.verifier not in flow.authorization_url()
    back = f"http://127.0.0.1:5/mcp-oauth/callback?code=abc&state={flow.state}&iss=https%3A%2F%2Fas.example"
    with pytest.raises(SignInError, match="state differs"):
        flow.accept(back.replace(flow.state, "other"), 1001.0)
    assert flow.accept(back, 1001.0) == "abc"
    with pytest.raises(SignInError, match="already"):
        flow.accept(back, 1002.0)
    late = start_flow(authorization_endpoint="https://as.example/a", client_id="c", redirect_uri="r", resource="x",
                      scope=None, issuer=None, iss_advertised=False, now=0.0)
    with pytest.raises(SignInError, match="five minutes"):
        late.accept(f"http://127.0.0.1:5/mcp-oauth/callback?code=a&state={late.state}", FLOW_SECONDS + 1)


def test_iss_is_checked_when_advertised() -> None:
    def flow(advertised: bool):  # type: ignore[no-untyped-def]
        return start_flow(authorization_endpoint="https://as.example/a", client_id="c", redirect_uri="r",
                          resource="x", scope=None, issuer="https://as.example", iss_advertised=advertised, now=0.0)

    missing = flow(True)
    with pytest.raises(SignInError, match="RFC 9207"):
        missing.accept(f"http://127.0.0.1:5/mcp-oauth/callback?code=a&state={missing.state}", 1.0)
    wrong = flow(False)
    with pytest.raises(SignInError, match="another authorization server"):
        wrong.accept(f"http://127.0.0.1:5/mcp-oauth/callback?code=a&state={wrong.state}&iss=https://evil", 1.0)


def test_the_token_file_is_sealed_and_never_overwritten_with_another_key(tmp_path: Path) -> None:
    tokens = TokenFile(tmp_path / "mcp-oauth.json", tmp_path / "mcp-oauth.key")
    with tokens.edit() as servers:
        servers["https://h/mcp"] = {"accessToken": "canary-access-1234", "state": "signed-in"}
    raw = (tmp_path / "mcp-oauth.json").read_bytes()
    assert b"canary-access-1234" not in raw and b"https://h/mcp" not in raw
    assert os.stat(tmp_path / "mcp-oauth.json").st_mode & 0o777 == 0o600
    assert os.stat(tmp_path / "mcp-oauth.key").st_mode & 0o777 == 0o600
    assert tokens.entry("https://h/mcp") == {"accessToken": "canary-access-1234", "state": "signed-in"}
    (tmp_path / "mcp-oauth.key").write_bytes(os.urandom(32))
    with pytest.raises(TokenFileError, match="cannot be opened with its key"):
        with tokens.edit() as servers:
            servers.clear()
    assert (tmp_path / "mcp-oauth.json").read_bytes() == raw


def test_a_key_from_the_environment(tmp_path: Path) -> None:
    key = base64.b64encode(os.urandom(32)).decode()
    tokens = TokenFile(tmp_path / "t.json", tmp_path / "unused.key", "OMB_TOKEN_KEY", {"OMB_TOKEN_KEY": key})
    tokens.forget(["x"])
    with tokens.edit() as servers:
        servers["x"] = {"accessToken": "y"}
    assert not (tmp_path / "unused.key").exists()
    assert TokenFile(tmp_path / "t.json", tmp_path / "unused.key", "OMB_TOKEN_KEY",
                     {"OMB_TOKEN_KEY": key}).entry("x") == {"accessToken": "y"}
    with pytest.raises(TokenFileError, match="OMB_TOKEN_KEY is not set"):
        TokenFile(tmp_path / "t.json", tmp_path / "unused.key", "OMB_TOKEN_KEY", {}).read()


async def test_concurrent_editors_take_turns(tmp_path: Path) -> None:
    """Two writers under the lock: each reads what the other wrote (nothing is lost)."""
    tokens = TokenFile(tmp_path / "t.json", tmp_path / "t.key")
    with tokens.edit() as servers:
        servers["x"] = {"n": 0}

    async def bump() -> None:
        async with tokens.editing() as servers:
            value = servers["x"]["n"]
            await asyncio.sleep(0)  # the other editor is waiting on the lock meanwhile
            servers["x"] = {"n": value + 1}

    await asyncio.gather(*(bump() for _ in range(8)))
    assert tokens.entry("x") == {"n": 8}
    assert json.loads((tmp_path / "t.json").read_text())["format"] == "omb-sidecar-tokens/1"
