"""The console on a shared gateway: the Servers page says which bots reach each server,
only the operator's token logs in (a bot's bearer does not), and a call of any bot
appears on the Calls page under its bot's name."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import anyio
import pytest

from tests.console.console_support import NOTES, ConsoleClient, McpCaller, open_console, write_config
from tests.http.http_support import HttpSidecar

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

IRIS, KAI = "token-of-iris-0123456789abcdef", "token-of-kai-0123456789abcdef"
CANARY = "canary-per-bot-3c2b1a0f9e"


def _row(page: str, name: str) -> str:
    found = re.search(rf"<tr><td><strong>{name}</strong>.*?</tr>", page)
    assert found, page
    return found.group(0)


async def test_the_gateway_console_says_which_bots_reach_each_server(tmp_path: Path, monkeypatch) -> None:
    notes = {"command": sys.executable, "args": [str(NOTES)]}
    gateway = {"bots": [{"id": "iris", "tokenEnv": "OMB_TOKEN_IRIS"}, {"id": "kai", "tokenEnv": "OMB_TOKEN_KAI"}]}
    config = write_config(tmp_path, {"shared": {**notes, "perBot": {"kai": {"env": {"KEY": CANARY}}}},
                                     "mine": {**notes, "env": {"WHO": "a-value-for-one-bot"}, "bot": "iris"}}, gateway=gateway)
    env = {"OMB_TOKEN_IRIS": IRIS, "OMB_TOKEN_KAI": KAI}
    from tests.http.http_support import open_http_sidecar

    async with open_http_sidecar(config, tmp_path, env=env, log_level="INFO") as sidecar:
        bot = ConsoleClient(sidecar.base)
        client = ConsoleClient(sidecar.base)
        engine = McpCaller(HttpSidecar(f"{sidecar.base}/bots/kai", KAI, sidecar.process, sidecar.stderr_path,
                                       sidecar.port))
        try:
            assert await bot.login(IRIS) == 403  # a bot's bearer is not the operator's token
            assert await client.login() == 303
            _, page = await client.get("/console/servers")
            assert "<th>Bots</th>" in page
            assert "iris, kai" in _row(page, "shared") and "iris" in _row(page, "mine")
            assert "kai" not in _row(page, "mine")
            await engine.open()
            await engine.wait_for_tool("shared__search_notes")
            await engine.call("shared__search_notes", {"query": "milk"})
            with anyio.fail_after(30):
                while "shared__search_notes" not in (calls := (await client.get("/console/calls"))[1]):
                    await anyio.sleep(0.1)
            assert re.search(r"<td>shared__search_notes</td><td>kai</td>", calls), calls
            assert CANARY not in page and CANARY not in calls
        finally:
            await bot.close()
            await client.close()
            await engine.close()
