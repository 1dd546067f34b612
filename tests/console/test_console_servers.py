"""The Servers page's Test over real HTTP: the same bounded check as `omb-sidecar check
NAME`, its words on the page; a pass turns the entry on and the running face starts it
(the engine lists its tools); a failure says why and changes nothing else."""

from __future__ import annotations

import html
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, child_env
from tests.console.console_support import NOTES, ConsoleClient, McpCaller, open_console, write_config

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


async def test_test_says_what_check_says_and_a_pass_joins_the_face(tmp_path: Path) -> None:
    config = write_config(tmp_path, {
        "notes": {"command": sys.executable, "args": [str(NOTES)], "enabled": False},
        "broken": {"command": sys.executable, "args": ["-c", "import sys; sys.exit(3)"]},
    })
    async with open_console(config, tmp_path) as sidecar:
        client, engine = ConsoleClient(sidecar.base), McpCaller(sidecar)
        try:
            assert await client.login() == 303
            _, page = await client.get("/console/servers")
            assert "state muted\">off" in page
            status, page = await client.post("/console/servers/notes/test", {})
            assert status == 200 and "Connected: 3 tools" in page and "&#x27;notes&#x27; is on." in page, page
            assert json.loads(config.read_text())["mcpServers"]["notes"].get("enabled", True) is True
            await engine.open()
            await engine.wait_for_tool("notes__search_notes")
            _, page = await client.post("/console/servers/broken/test", {})
            assert 'class="notice bad"' in page
        finally:
            await client.close()
            await engine.close()
    command = subprocess.run([sys.executable, "-m", "sidecar", "check", "broken", "--config", str(config)],
                             capture_output=True, text=True, cwd=REPO, env=child_env(), timeout=60)
    headline = command.stdout.splitlines()[0]
    assert html.escape(headline) in page, (headline, page)  # the same words as the command's
