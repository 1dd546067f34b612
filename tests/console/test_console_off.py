"""The console off (the default) costs nothing: no console module is imported and there
is no `/console` route; on, the CLI hands the front its mount and the route answers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import aiohttp

from tests.console.console_support import NOTES, ConsoleClient, open_console, write_config
from tests.http.http_support import TOKEN


def test_the_console_loads_only_when_it_is_enabled() -> None:
    code = ("import sys; from sidecar.cli import _console; from sidecar.config import parse_config; "
            "off = _console(parse_config({}, {})); loaded = [m for m in sys.modules if 'console' in m]; "
            "on = _console(parse_config({'console': {'enabled': True}}, {})); "
            "print(off, len(loaded), on.__module__, on.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["None", "0", "sidecar_admin.console", "mount_console"]


async def test_off_there_is_no_console_route(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"notes": {"command": sys.executable, "args": [str(NOTES)]}}, console={})
    async with open_console(config, tmp_path) as sidecar, aiohttp.ClientSession() as http:
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        for path in ("/console", "/console/login", "/console/servers", "/console/static/console.css"):
            async with http.get(sidecar.base + path, headers=bearer, allow_redirects=False) as response:
                assert response.status == 404, path
            async with http.get(sidecar.base + path, allow_redirects=False) as response:
                assert response.status == 401, path  # without the bearer, as any other path
        assert "sidecar_admin" not in sidecar.stderr


async def test_on_the_console_answers_with_its_login_form(tmp_path: Path) -> None:
    config = write_config(tmp_path, {})
    async with open_console(config, tmp_path) as sidecar:
        client = ConsoleClient(sidecar.base)
        try:
            status, page = await client.get("/console")
            assert status == 303
            status, page = await client.get("/console/login")
            assert status == 200 and 'name="token"' in page and 'type="password"' in page
        finally:
            await client.close()
