"""The canary sweep: every access token, refresh token, client secret, code verifier and
authorization code of a whole sign-in life (sign in, check, serve, refresh, sign out)
is collected from the authorization server's side, then looked for in everything the
sidecar wrote: DEBUG logs, stderr, printed lines, answers and errors to the engine, the
audit file, every process's /proc/PID/cmdline, and the token file's bytes.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import anyio
import pytest

from tests.conftest import open_sidecar_client
from tests.oauth.oauth_support import command, sdk_auth_server, sign_in_by_browser, write_config

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]


def cmdlines() -> str:
    found = []
    for path in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            found.append(path.read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue
    return "\n".join(found)


async def test_no_secret_of_a_sign_in_leaks(tmp_path: Path) -> None:
    said: list[str] = []
    async with sdk_auth_server() as server:
        audit = tmp_path / "audit.jsonl"
        config = write_config(tmp_path / "config.json", {"guarded": {"type": "http", "url": server.url}},
                              audit={"file": str(audit)})
        debug = {"OMB_LOG_LEVEL": "DEBUG"}
        code, printed = await sign_in_by_browser(config, "guarded", env=debug)
        assert code == 0, printed
        said.append(printed)
        for argv in (("check", "guarded", "--log-level", "DEBUG"), ("servers", "list", "--json"),
                     ("servers", "show", "guarded")):
            _, out, err = await command(config, *argv)
            said += [out, err]
        stderr_path = tmp_path / "stderr.txt"
        argv = [sys.executable, "-m", "sidecar", "--config", str(config), "--log-level", "DEBUG"]
        async with open_sidecar_client(argv, stderr_path) as client:
            await client.wait_for_tools(["guarded__echo"])
            said.append(cmdlines())
            for text in ("one", "two"):
                result = await client.session.call_tool("guarded__echo", {"text": text})
                said.append(result.model_dump_json())
                await server.control("/test/expire")
            said.append(cmdlines())
            await server.control("/test/revoke-refresh")
            try:
                result = await client.session.call_tool("guarded__echo", {"text": "three"})
                said.append(result.model_dump_json())
            except Exception as exc:  # the JSON-RPC error the engine gets
                said.append(str(exc))
            with anyio.fail_after(10):
                while "guarded" not in stderr_path.read_text():
                    await anyio.sleep(0.05)
        said.append(stderr_path.read_text())
        code, out, err = await command(config, "signout", "guarded", "--log-level", "DEBUG")
        said += [out, err]
        if audit.exists():
            said.append(audit.read_text())
        record = await server.record()
    canaries = [v for v in record["values"] if len(v) >= 8]
    kinds = {v.split("-", 1)[0] for v in canaries}
    assert {"at", "rt", "code"} <= kinds, kinds  # tokens, refreshed tokens and codes were all issued
    assert any(len(v) == 64 for v in canaries)  # the client secret the server issued
    assert any(len(v) >= 43 and "-" not in v[:3] for v in canaries)  # the code verifiers it received
    everything = "\n".join(said)
    sealed = (tmp_path / "mcp-oauth.json").read_bytes() if (tmp_path / "mcp-oauth.json").exists() else b""
    for value in canaries:
        forms = {value, base64.b64encode(value.encode()).decode().rstrip("=")}
        for form in forms:
            assert form not in everything, f"a secret ({value[:4]}...) leaked"
            assert form.encode() not in sealed
