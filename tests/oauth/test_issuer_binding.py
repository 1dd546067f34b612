"""A configured client credential belongs to one authorization server (issue 22, class 5):
`oauth.issuer`, or the issuer of its first sign-in, pinned in the sealed token file.
Discovery naming another is refused in words naming both, before the secret is sent, at
`signin`, at refresh and for unattended client credentials.

Two real authorization servers on 127.0.0.1 (the SDK-built one, twice; the pinned case
restarts the first on its port naming the second), and the hostile site as a
client-credentials server.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest

from sidecar.config import load_config
from sidecar.errors import UpstreamUnavailable
from sidecar.upstream.oauth import runtime
from sidecar.upstream.oauth.discovery import callback_port, callback_uri, canonical_resource
from sidecar.upstream.oauth.issuers import PIN_PREFIX
from sidecar.upstream.oauth.sealed import TokenFile
from tests.http.http_support import free_port
from tests.oauth.hostile_auth import PRM, Canned, hostile_auth
from tests.oauth.oauth_support import AuthServer, command, sdk_auth_server, sign_in_by_browser, write_config

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]
SECRET = "bound-secret-canary-2718"


def app(url: str, **oauth: Any) -> dict[str, Any]:
    return {"type": "http", "url": url, "oauth": {"clientId": "corp-app", "clientSecret": SECRET, **oauth}}


async def token_requests(server: AuthServer) -> list[dict[str, Any]]:
    return [r for r in (await server.record())["requests"] if r["at"] == "token"]


def pins(tmp_path: Path) -> dict[str, Any]:
    stored = TokenFile(tmp_path / "mcp-oauth.json", tmp_path / "mcp-oauth.key").read()
    return {k: v for k, v in stored.items() if k.startswith(PIN_PREFIX)}


async def test_a_configured_issuer_refuses_another(tmp_path: Path) -> None:
    async with sdk_auth_server() as first, sdk_auth_server("--no-registration", "--client", f"corp-app:{SECRET}") as other:
        config = write_config(tmp_path / "config.json", {"corp": app(other.url, issuer=first.base)})
        code, out, err = await command(config, "signin", "corp", "--no-browser")
        assert code == 1 and out.startswith("Not signed in: the authorization server"), out + err
        assert first.base in out and other.base in out and "configured as oauth.issuer" in out
        assert SECRET not in out + err and await token_requests(other) == []

        config = write_config(tmp_path / "config.json", {"corp": app(other.url, issuer=first.base,
                                                                     grant="client_credentials")})
        code, out, _ = await command(config, "signin", "corp", "--no-browser")
        assert code == 1 and first.base in out and other.base in out, out
        assert await token_requests(other) == []


async def test_the_first_sign_in_pins_its_issuer(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    client = ("--no-registration", "--port", str(port), "--client", f"corp-app:{SECRET}",
              "--redirect", callback_uri(callback_port(url)))
    config = write_config(tmp_path / "config.json", {"corp": app(url)})
    async with sdk_auth_server("--client", f"corp-app:{SECRET}") as other:
        async with sdk_auth_server(*client) as first:
            code, printed = await sign_in_by_browser(config, "corp")
            assert code == 0, printed
            assert [p["issuer"] for p in pins(tmp_path).values()] == [first.base]
        async with AsyncExitStack() as stack:  # the same address, now naming another server
            moved = await stack.enter_async_context(sdk_auth_server(*client, "--issuer", other.base))
            code, out, err = await command(config, "signin", "corp", "--no-browser")
            assert code == 1 and first.base in out and other.base in out, out + err
            assert "pinned at its first sign-in" in out and SECRET not in out + err
            assert await token_requests(other) == [] and await token_requests(moved) == []

            write_config(tmp_path / "config.json", {"corp": app(url, issuer=other.base)})
            loaded = load_config(tmp_path / "config.json")
            runtime.use(loaded)
            source = runtime.source_for(loaded.servers[0])
            assert source is not None
            with pytest.raises(UpstreamUnavailable) as refused:  # a refresh carries the secret too
                await source.rejected(str(TokenFile(tmp_path / "mcp-oauth.json", tmp_path / "mcp-oauth.key")
                                          .entry(canonical_resource(url))["accessToken"]), "")
            assert "could not renew its sign-in" in refused.value.message
            assert first.base in refused.value.message and other.base in refused.value.message
            assert await token_requests(other) == [] and await token_requests(moved) == []


async def test_unattended_credentials_pin_and_refuse(tmp_path: Path) -> None:
    async with hostile_auth() as site, sdk_auth_server("--client", f"corp-app:{SECRET}") as other:
        config_path = write_config(tmp_path / "config.json", {"robot": app(site.url, grant="client_credentials")})
        config = load_config(config_path)
        runtime.use(config)
        first = runtime.source_for(config.servers[0])
        assert first is not None and await first.bearer() == "at-hostile-canary"
        assert [p["issuer"] for p in pins(tmp_path).values()] == [site.origin]

        token_file = TokenFile(tmp_path / "mcp-oauth.json", tmp_path / "mcp-oauth.key")
        token_file.forget([canonical_resource(site.url)])  # a fresh box with the same token file
        site.answers[PRM] = Canned.of({"resource": site.url, "authorization_servers": [other.base]})
        again = runtime.source_for(config.servers[0])
        assert again is not None
        with pytest.raises(UpstreamUnavailable) as refused:
            await again.bearer()
        words = refused.value.message
        assert site.origin in words and other.base in words and SECRET not in words, words
        assert await token_requests(other) == []
