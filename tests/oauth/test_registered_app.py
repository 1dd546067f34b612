"""Servers that need an app registered in advance: the advice when none is set, a
configured client ID with its secret (HTTP Basic at the token endpoint, never in the
token file, blank in `servers show`), the fixed loopback port (shown, and refused when
held), and which changes sign the server out (client ID, scopes) and which do not (a new
secret).
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from sidecar.upstream.oauth.discovery import callback_port, callback_uri
from tests.http.http_support import free_port
from tests.oauth.oauth_support import command, sdk_auth_server, sign_in_by_browser, write_config

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]
SECRET = "app-secret-canary-5150"


async def test_no_registration_says_what_to_register(tmp_path: Path) -> None:
    async with sdk_auth_server("--no-registration") as server:
        config = write_config(tmp_path / "config.json", {"corp": {"type": "http", "url": server.url}})
        code, out, _ = await command(config, "signin", "corp", "--no-browser")
        assert code == 1
        assert "does not let apps register themselves" in out
        assert callback_uri(callback_port(server.url)) in out and "oauth.clientId" in out


async def test_a_registered_app_signs_in_on_its_fixed_port(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    redirect = callback_uri(callback_port(url))
    async with sdk_auth_server("--no-registration", "--port", str(port), "--client", f"corp-app:{SECRET}",
                               "--redirect", redirect) as server:
        entry = {"type": "http", "url": url, "oauth": {"clientId": "corp-app", "clientSecret": SECRET}}
        config = write_config(tmp_path / "config.json", {"corp": entry})
        _, shown, _ = await command(config, "servers", "show", "corp")
        form = json.loads(shown)
        assert form["oauth"]["clientSecret"] == "" and form["redirectUri"] == redirect
        assert SECRET not in shown

        with socket.socket() as holder:  # another program on the registered port
            holder.bind(("127.0.0.1", callback_port(url)))
            holder.listen(1)
            code, out, _ = await command(config, "signin", "corp", "--no-browser")
        assert code == 1 and f"another program holds port {callback_port(url)}" in out, out

        code, printed = await sign_in_by_browser(config, "corp")
        assert code == 0, printed
        assert f"redirect_uri={redirect.replace(':', '%3A').replace('/', '%2F')}" in printed
        tokens = [r for r in (await server.record())["requests"] if r["at"] == "token"]
        assert tokens and all(r["basic"] for r in tokens)
        assert SECRET.encode() not in (tmp_path / "mcp-oauth.json").read_bytes()

        document = json.loads(config.read_text())
        document["mcpServers"]["corp"]["oauth"]["clientSecret"] = "a-new-secret-for-the-same-app"
        config.write_text(json.dumps(document))
        _, listed, _ = await command(config, "servers", "list")
        assert "sign-in: signed in" in listed, listed
        document["mcpServers"]["corp"]["oauth"]["scopes"] = "mcp:read mcp:write"
        config.write_text(json.dumps(document))
        _, listed, _ = await command(config, "servers", "list")
        assert "sign-in: needs sign-in" in listed, listed


async def test_a_chosen_callback_port_is_the_registered_apps_return_address(tmp_path: Path) -> None:
    """`oauth.callbackPort` (an app registered under an earlier release's port) is the
    address shown to register and the one the sign-in listens on and sends."""
    port, chosen = free_port(), free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    redirect = callback_uri(chosen)
    assert chosen != callback_port(url)
    async with sdk_auth_server("--no-registration", "--port", str(port), "--client", f"corp-app:{SECRET}",
                               "--redirect", redirect):
        entry = {"type": "http", "url": url,
                 "oauth": {"clientId": "corp-app", "clientSecret": SECRET, "callbackPort": chosen}}
        config = write_config(tmp_path / "config.json", {"corp": entry})
        _, shown, _ = await command(config, "servers", "show", "corp")
        assert json.loads(shown)["redirectUri"] == redirect
        code, printed = await sign_in_by_browser(config, "corp")
        assert code == 0, printed
        assert f"redirect_uri={redirect.replace(':', '%3A').replace('/', '%2F')}" in printed
