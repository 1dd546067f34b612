"""The console's defences against a real sidecar over real HTTP: no page, form or act
without the session cookie; a cross-site POST refused (foreign or missing Origin,
missing or wrong CSRF token) and nothing done; the login refuses a wrong token; and no
configured secret (env and header values, a URL's key, the operator's token, a value
typed into a form) appears on any page in any encoding the redactor knows."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.console.console_support import NOTES, TOKEN, ConsoleClient, open_console, write_config
from tests.test_redact_forms import hides

pytestmark = pytest.mark.e2e

CANARIES = {"env": "canary-env-1f0e9d8c7b6a", "header": "canary-header-2a3b4c5d6e7f", "url": "canary-url-9z8y7x6w5v",
            "typed": "canary-typed-0q1w2e3r4t", "pasted": "canary-pasted-5t6y7u8i9o"}
PAGES = ("/console/servers", "/console/add", "/console/held", "/console/calls", "/console/calls.json",
         "/console/servers/notes/fill", "/console/servers/remote/fill")
ACTS = ("/console/servers/notes/test", "/console/held/notes/approve", "/console/add", "/console/servers/notes/fill",
        "/console/logout")


def _config(tmp_path: Path) -> Path:
    return write_config(tmp_path, {
        "notes": {"command": sys.executable, "args": [str(NOTES)], "env": {"NOTES_KEY": CANARIES["env"], "BLANK": ""}},
        "remote": {"type": "http", "url": f"http://127.0.0.1:9/mcp?key={CANARIES['url']}",
                   "headers": {"Authorization": f"Bearer {CANARIES['header']}", "X-Other": ""}, "enabled": False},
    })


async def test_nothing_is_served_or_done_without_the_cookie(tmp_path: Path) -> None:
    async with open_console(_config(tmp_path), tmp_path) as sidecar:
        stranger = ConsoleClient(sidecar.base)
        try:
            for path in PAGES:
                status, page = await stranger.get(path)
                assert status in (303, 403) and "csrf" not in page, path
            for path in ACTS:
                status, _ = await stranger.post(path, {"paste": "npx -y some-server"}, csrf="anything")
                assert status == 403, path
            assert "some-server" not in (tmp_path / "sidecar.json").read_text()
        finally:
            await stranger.close()


async def test_a_wrong_token_opens_no_session(tmp_path: Path) -> None:
    async with open_console(_config(tmp_path), tmp_path) as sidecar:
        client = ConsoleClient(sidecar.base)
        try:
            assert await client.login("not-the-token-0123456789") == 403
            assert not any(c.key == "omb_console" for c in client.http.cookie_jar)
            assert (await client.get("/console/servers"))[0] == 303
            assert await client.login() == 303
            cookie = next(c for c in client.http.cookie_jar if c.key == "omb_console")
            assert cookie["httponly"] and cookie["samesite"] == "Strict" and cookie["path"] == "/console"
            assert len(cookie.value) >= 40
        finally:
            await client.close()


async def test_a_cross_site_post_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    config = _config(tmp_path)
    async with open_console(config, tmp_path) as sidecar:
        client = ConsoleClient(sidecar.base)
        try:
            assert await client.login() == 303
            paste = {"paste": "npx -y @example/cross-site-mcp"}
            tries = [{"origin": "http://evil.example"}, {"origin": None}, {"origin": "null"},
                     {"csrf": None}, {"csrf": "wrong-token"}, {"csrf": ""}]
            for given in tries:
                status, _ = await client.post("/console/add", paste, **given)  # type: ignore[arg-type]
                assert status == 403, given
            assert "cross-site-mcp" not in config.read_text()
            status, page = await client.post("/console/add", paste)  # the same form, from the console itself
            assert status == 200 and "cross-site-mcp" in page
            assert "cross-site-mcp" in config.read_text()
        finally:
            await client.close()


async def test_no_secret_reaches_any_page_in_any_encoding(tmp_path: Path) -> None:
    async with open_console(_config(tmp_path), tmp_path) as sidecar:
        client = ConsoleClient(sidecar.base)
        try:
            assert await client.login() == 303
            seen = []
            for path in PAGES:
                status, page = await client.get(path)
                assert status == 200, (path, page)
                seen.append(page)
            _, page = await client.post("/console/servers/notes/fill", {"v:env:BLANK": CANARIES["typed"]})
            seen.append(page)
            paste = json.dumps({"mcpServers": {"pasted": {"type": "http", "url": "http://127.0.0.1:9/mcp",
                                                          "headers": {"X-Key": CANARIES["pasted"]}}}})
            _, page = await client.post("/console/add", {"paste": paste})
            seen.append(page)
            _, page = await client.post("/console/servers/remote/test", {})
            seen.append(page)
            for path in PAGES:
                seen.append((await client.get(path))[1])
            assert CANARIES["typed"] in (tmp_path / "sidecar.json").read_text()  # it was written, never shown
            for page in seen:
                for name, secret in {**CANARIES, "token": TOKEN}.items():
                    assert hides(page, secret), (name, page[:400])
        finally:
            await client.close()
