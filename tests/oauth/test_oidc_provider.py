"""Sign-in against an independent, certified OpenID provider: the npm `oidc-provider`
package (tests/oauth/oidc_server.mjs) as the authorization server of a protected MCP
server built on the SDK (tests/oauth/oidc_resource_server.py), which accepts only its
JWT access tokens for its own address.

It exercises what the SDK's server does not: OpenID discovery only (no RFC 8414
document), RFC 9207 `iss` on the return, a native-app registration, resource-bound JWT
access tokens, and real login and consent pages walked the way a browser does.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from tests.conftest import REPO, child_env, open_sidecar_client
from tests.http.http_support import free_port

from tests.oauth.oauth_support import come_back, command, node22, read_line, signin, stop, walk_forms, write_config

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]
HERE = Path(__file__).resolve().parent


@asynccontextmanager
async def oidc_guarded() -> AsyncIterator[str]:
    """The provider and the MCP server it guards; yields the MCP server's address."""
    issuer_port, mcp_port = free_port(), free_port()
    url = f"http://127.0.0.1:{mcp_port}/mcp"
    provider = await anyio.open_process([node22(), str(HERE / "oidc_server.mjs"), str(issuer_port), url],
                                        env=child_env(), cwd=str(REPO), start_new_session=True, stderr=None)
    guarded = await anyio.open_process([sys.executable, str(HERE / "oidc_resource_server.py"), str(mcp_port),
                                        f"http://127.0.0.1:{issuer_port}"], env=child_env(), cwd=str(REPO),
                                       start_new_session=True, stderr=None)
    try:
        await read_line(provider, [], "PORT ")
        await read_line(guarded, [], "PORT ")
        yield url
    finally:
        await stop(guarded)
        await stop(provider)


async def test_signin_with_oidc_provider_then_serve_and_sign_out(tmp_path: Path) -> None:
    async with oidc_guarded() as url:
        config = write_config(tmp_path / "config.json", {"oidc": {"type": "http", "url": url}})
        code, out, _ = await command(config, "check", "oidc")
        assert code == 1 and out.startswith("Needs sign-in:"), out
        async with signin(config, "oidc") as flow:
            status, page = await come_back(await walk_forms(await flow.authorization_url()))
            assert status == 200 and "Signed in" in page
            assert await flow.finish() == 0, flow.stdout
            assert "Signed in: 'oidc' is connected with 1 tool." in flow.stdout
        argv = [sys.executable, "-m", "sidecar", "--config", str(config)]
        async with open_sidecar_client(argv, tmp_path / "stderr.txt") as client:
            await client.wait_for_tools(["oidc__echo"])
            result = await client.session.call_tool("oidc__echo", {"text": "hi"})
            assert "oidc echo: hi" in result.content[0].text
        code, out, _ = await command(config, "signout", "oidc")
        assert code == 0 and "revoked" in out, out
        code, out, _ = await command(config, "servers", "list")
        assert "sign-in: needs sign-in" in out
