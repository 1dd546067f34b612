"""Refresh at run time, against the SDK-built authorization server: two sidecars sharing
one token file refresh once between them and both keep the rotated refresh token; a
token about to expire is refreshed before it is sent."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from sidecar.config import load_config
from sidecar.upstream.oauth import runtime
from sidecar.upstream.oauth.discovery import canonical_resource
from tests.oauth.oauth_support import sdk_auth_server, sign_in_by_browser, write_config

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


async def test_two_sidecars_refresh_once_and_keep_the_rotated_token(tmp_path: Path) -> None:
    async with sdk_auth_server() as server:
        config_path = write_config(tmp_path / "config.json", {"guarded": {"type": "http", "url": server.url}})
        assert (await sign_in_by_browser(config_path, "guarded"))[0] == 0
        config = load_config(config_path)
        (entry_server,) = config.servers
        token_file = runtime.use(config)
        assert token_file is not None
        before = token_file.entry(canonical_resource(server.url))
        assert before is not None
        one, two = runtime.source_for(entry_server), runtime.source_for(entry_server)
        assert one is not None and two is not None
        stale = await one.bearer()
        await server.control("/test/expire")
        first, second = await asyncio.gather(one.rejected(stale, ""), two.rejected(stale, ""))
        assert first == second != stale
        refreshes = [r for r in (await server.record())["requests"] if r["at"] == "refresh"]
        assert len(refreshes) == 1
        after = token_file.entry(canonical_resource(server.url))
        assert after is not None and after["refreshToken"] != before["refreshToken"]
        assert (await server.record())["live"]["refresh"] == 1  # the old one is spent, the new one kept

        with token_file.edit() as servers:  # about to expire: refreshed before it is sent
            servers[canonical_resource(server.url)]["expiresAt"] = time.time() + 5
        three = runtime.source_for(entry_server)
        assert three is not None
        assert await three.bearer() != first
        assert len([r for r in (await server.record())["requests"] if r["at"] == "refresh"]) == 2
