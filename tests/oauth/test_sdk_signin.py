"""Sign-in end to end against an authorization server and a protected MCP server built
from the `mcp` SDK's own server auth components (tests/oauth/sdk_auth_server.py).

check says "Needs sign-in"; signin completes (loopback, and --paste); the sidecar lists
and calls the protected tools; an expired access token is refreshed and the next call
survives; a revoked refresh token puts the server back to needs sign-in while another
server still serves; signout revokes; a changed address drops the tokens.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import open_sidecar_client
from tests.oauth.oauth_support import (
    approve,
    command,
    sdk_auth_server,
    sign_in_by_browser,
    signin,
    write_config,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]


async def call_error(client, name: str, arguments: dict) -> str:
    """The words of a call that fails: an error result or a JSON-RPC error."""
    from mcp.shared.exceptions import MCPError

    try:
        result = await client.session.call_tool(name, arguments)
    except MCPError as exc:
        return str(exc)
    assert result.is_error, result
    return str(result.content[0].text)


def sidecar_argv(config: Path, *extra: str) -> list[str]:
    import sys

    return [sys.executable, "-m", "sidecar", "--config", str(config), *extra]


async def test_check_says_needs_sign_in_then_signin_connects(tmp_path: Path) -> None:
    async with sdk_auth_server() as server:
        config = write_config(tmp_path / "config.json", {"guarded": {"type": "http", "url": server.url}})
        code, out, _ = await command(config, "check", "guarded")
        assert code == 1
        assert out.startswith("Needs sign-in:"), out
        assert "omb-sidecar signin guarded" in out
        _, listed, _ = await command(config, "servers", "list")
        assert "sign-in: needs sign-in" in listed

        code, printed = await sign_in_by_browser(config, "guarded")
        assert code == 0, printed
        assert "Signed in: 'guarded' is connected with 2 tools." in printed
        record = await server.record()
        asked = [r for r in record["requests"] if r["at"] in ("authorize", "token")]
        assert all(r["resource"] == server.url for r in asked), asked
        assert [r["scope"] for r in asked if r["at"] == "authorize"] == ["mcp:read"]

        _, listed, _ = await command(config, "servers", "list")
        assert "sign-in: signed in (expires in" in listed
        token_file = tmp_path / "mcp-oauth.json"
        assert token_file.stat().st_mode & 0o777 == 0o600
        assert (tmp_path / "mcp-oauth.key").stat().st_mode & 0o777 == 0o600
        sealed = token_file.read_bytes()
        for value in record["values"]:
            assert value.encode() not in sealed


async def test_the_sidecar_lists_calls_and_refreshes(tmp_path: Path) -> None:
    async with sdk_auth_server() as server:
        config = write_config(tmp_path / "config.json", {"guarded": {"type": "http", "url": server.url,
                                                                     "headers": {"Authorization": "Bearer wrong"}}})
        assert (await sign_in_by_browser(config, "guarded"))[0] == 0
        async with open_sidecar_client(sidecar_argv(config), tmp_path / "stderr.txt") as client:
            await client.wait_for_tools(["guarded__echo"])
            result = await client.session.call_tool("guarded__echo", {"text": "one"})
            assert "echo: one" in result.content[0].text
            await server.control("/test/expire")
            result = await client.session.call_tool("guarded__echo", {"text": "two"})
            assert "echo: two" in result.content[0].text, result
        refreshes = [r for r in (await server.record())["requests"] if r["at"] == "refresh"]
        assert len(refreshes) == 1 and refreshes[0]["resource"] == server.url


async def test_paste_signin_works_once(tmp_path: Path) -> None:
    async with sdk_auth_server() as server:
        config = write_config(tmp_path / "config.json", {"guarded": {"type": "http", "url": server.url}})
        async with signin(config, "guarded", "--paste") as flow:
            back = await approve(await flow.authorization_url())
            assert flow.process.stdin is not None
            await flow.process.stdin.send((back + "\n").encode())
            assert await flow.finish() == 0, flow.stdout
            assert "Signed in: 'guarded' is connected with 2 tools." in flow.stdout
        async with signin(config, "guarded", "--paste") as again:
            await again.authorization_url()
            assert again.process.stdin is not None
            await again.process.stdin.send((back + "\n").encode())  # the old address: another flow's state
            assert await again.finish() == 1
            assert "does not belong to this sign-in" in again.stdout


async def test_signout_revokes_and_a_changed_address_drops_tokens(tmp_path: Path) -> None:
    async with sdk_auth_server() as server:
        config = write_config(tmp_path / "config.json", {"guarded": {"type": "http", "url": server.url}})
        assert (await sign_in_by_browser(config, "guarded"))[0] == 0
        code, out, _ = await command(config, "signout", "guarded")
        assert code == 0 and "its tokens were revoked and forgotten" in out, out
        record = await server.record()
        assert {r["kind"] for r in record["requests"] if r["at"] == "revoke"} == {"RefreshToken", "AccessToken"}
        assert record["live"] == {"access": 0, "refresh": 0}
        _, listed, _ = await command(config, "servers", "list")
        assert "sign-in: needs sign-in" in listed

        assert (await sign_in_by_browser(config, "guarded"))[0] == 0
        document = json.loads(config.read_text())
        document["mcpServers"]["guarded"]["url"] = server.url + "/"  # the same canonical address
        config.write_text(json.dumps(document))
        _, listed, _ = await command(config, "servers", "list")
        assert "sign-in: signed in" in listed
        document["mcpServers"]["guarded"]["url"] = server.base + "/other"
        config.write_text(json.dumps(document))
        _, listed, _ = await command(config, "servers", "list")
        assert "sign-in: signed in" not in listed


async def test_a_refused_refresh_takes_only_that_server_out(tmp_path: Path, sdk_server_entry) -> None:
    async with sdk_auth_server() as server:
        config = write_config(tmp_path / "config.json", {"guarded": {"type": "http", "url": server.url},
                                                         "plain": sdk_server_entry(name="plain")})
        assert (await sign_in_by_browser(config, "guarded"))[0] == 0
        async with open_sidecar_client(sidecar_argv(config), tmp_path / "stderr.txt") as client:
            await client.wait_for_tools(["guarded__echo", "plain__echo"])
            await server.control("/test/revoke-refresh")
            await server.control("/test/expire")
            seen = client.tools_changed
            failed = await call_error(client, "guarded__echo", {"text": "three"})
            assert "refused to renew the sign-in" in failed and "omb-sidecar signin guarded" in failed, failed
            await client.wait_for_notification(__import__("mcp_types").ToolListChangedNotification,
                                               where=lambda n: client.tools_changed > seen)
            names = {t.name for t in await client.list_all_tools()}
            assert "guarded__echo" not in names and "plain__echo" in names
            again = await call_error(client, "guarded__echo", {"text": "four"})
            # gone from the list, and every later call still says what a person must do
            assert "needs sign-in" in again and "omb-sidecar signin guarded" in again, again
            plain = await client.session.call_tool("plain__echo", {"nonce": "n-1"})
            assert not plain.is_error
        _, listed, _ = await command(config, "servers", "list")
        assert "sign-in: sign-in refused" in listed, listed


async def test_insufficient_scope_asks_for_a_wider_sign_in(tmp_path: Path) -> None:
    async with sdk_auth_server("--required", "mcp:read mcp:write") as server:
        entry = {"type": "http", "url": server.url, "oauth": {"scopes": "mcp:read"}}
        config = write_config(tmp_path / "config.json", {"narrow": entry})
        code, printed = await sign_in_by_browser(config, "narrow")
        assert code == 1 and "lack of scope" in printed and "omb-sidecar signin narrow" in printed, printed
        _, listed, _ = await command(config, "servers", "list")
        assert "sign-in: needs sign-in" in listed
        code, printed = await sign_in_by_browser(config, "narrow")
        assert code == 0, printed
        asked = [r["scope"] for r in (await server.record())["requests"] if r["at"] == "authorize"]
        assert asked == ["mcp:read", "mcp:read mcp:write"]


async def test_removing_the_server_drops_its_tokens(tmp_path: Path) -> None:
    from sidecar.upstream.oauth.discovery import canonical_resource
    from sidecar.upstream.oauth.sealed import TokenFile

    async with sdk_auth_server() as server:
        config = write_config(tmp_path / "config.json", {"guarded": {"type": "http", "url": server.url}})
        assert (await sign_in_by_browser(config, "guarded"))[0] == 0
        tokens = TokenFile(tmp_path / "mcp-oauth.json", tmp_path / "mcp-oauth.key")
        assert tokens.entry(canonical_resource(server.url)) is not None
        code, _, _ = await command(config, "servers", "remove", "guarded")
        assert code == 0
        assert tokens.entry(canonical_resource(server.url)) is None
