"""Sign in from the console against the SDK-built authorization server (tests/oauth): the
pasted return address (no public https address), and the console's own return path
(`console.publicUrl` over https); the same state and PKCE checks as the command (a
spent or foreign address is refused); the engine then lists the protected tools; Sign out
forgets the tokens and leaves the server out."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.console.console_support import ConsoleClient, McpCaller, open_console, write_config
from tests.oauth.oauth_support import approve, sdk_auth_server

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

_LINK = re.compile(r'href="([^"]+)"[^>]*target="_blank"')


def _authorization_url(page: str) -> str:
    found = _LINK.search(page)
    assert found, page
    return unescape(found.group(1))


async def test_sign_in_by_pasting_the_return_address_then_sign_out(tmp_path: Path) -> None:
    async with sdk_auth_server() as auth:
        config = write_config(tmp_path, {"guarded": {"type": "http", "url": auth.url}},
                              data={"folder": str(tmp_path / "data")})
        async with open_console(config, tmp_path) as sidecar:
            client = ConsoleClient(sidecar.base)
            engine = McpCaller(sidecar)
            try:
                assert await client.login() == 303
                _, tested = await client.post("/console/servers/guarded/test", {})
                assert "Needs sign-in" in tested and ">Sign in</button>" in tested, tested
                assert 'class="state warn">needs sign-in' in tested
                status, page = await client.post("/console/servers/guarded/signin", {})
                assert status == 200 and 'name="address"' in page, page
                back = await approve(_authorization_url(page))
                assert urlsplit(back).path == "/mcp-oauth/callback"
                status, page = await client.post("/console/servers/guarded/signin/paste", {"address": back})
                assert "Signed in: &#x27;guarded&#x27; is connected with 2 tools." in page, page
                status, again = await client.post("/console/servers/guarded/signin/paste", {"address": back})
                assert "belongs to no sign-in" in again  # single use
                await engine.open()
                assert any(name.startswith("guarded__") for name in await _listed(engine))
                status, page = await client.post("/console/servers/guarded/signout", {})
                assert "Signed out of &#x27;guarded&#x27;" in page, page
                assert not any(name.startswith("guarded__") for name in await engine.tools())
            finally:
                await client.close()
                await engine.close()


async def _listed(engine: McpCaller) -> set[str]:
    import anyio

    with anyio.fail_after(30):
        while True:
            names = await engine.tools()
            if any(n.startswith("guarded__") for n in names):
                return names
            await anyio.sleep(0.1)


async def test_sign_in_comes_back_to_the_consoles_own_address(tmp_path: Path) -> None:
    async with sdk_auth_server() as auth:
        config = write_config(tmp_path, {"guarded": {"type": "http", "url": auth.url}},
                              console={"enabled": True, "publicUrl": "https://console.example"},
                              data={"folder": str(tmp_path / "data")})
        async with open_console(config, tmp_path) as sidecar:
            plain = ConsoleClient(sidecar.base)
            try:
                assert await plain.login() == 403  # its cookies are Secure: they do not come back over plain http
            finally:
                await plain.close()
            client = ConsoleClient(sidecar.base, behind_tls=True)
            try:
                assert await client.login() == 303
                cookie = next(c for c in client.http.cookie_jar if c.key == "omb_console")
                assert cookie["secure"]
                _, page = await client.post("/console/servers/guarded/signin", {})
                assert "brings you back here" in page and 'name="address"' not in page
                back = await approve(_authorization_url(page))
                parts = urlsplit(back)
                assert f"{parts.scheme}://{parts.netloc}{parts.path}" == "https://console.example/console/mcp-oauth/callback"
                stranger = ConsoleClient(sidecar.base)  # the provider's redirect carries no Strict cookie
                try:
                    forged = parts.query.replace("state=", "state=x")
                    status, _ = await stranger.get(f"/console/mcp-oauth/callback?{forged}")
                    assert status == 400
                    status, page = await stranger.get(f"/console/mcp-oauth/callback?{parts.query}")
                    assert status == 200 and "is connected with 2 tools" in page, page
                finally:
                    await stranger.close()
            finally:
                await client.close()
