"""Servers that name where the sidecar should fetch (issue 22, classes 4 and 6), end to end:
`omb-sidecar signin` and a running sidecar (unattended client credentials) against a real
401 whose `resource_metadata` names 169.254.169.254, and against hostile metadata. Each ends
in words (exit 1, "Not signed in: ..."), never a traceback; a running sidecar keeps serving
its other servers and logs no "Task exception was never retrieved".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import open_sidecar_client
from tests.oauth.hostile_auth import ASM, TOKEN, Canned, HostileAuth, hostile_auth
from tests.oauth.oauth_support import command, write_config

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]
CLOUD = "http://169.254.169.254/latest/meta-data/iam/security-credentials/"
SECRET = "client-secret-canary-3141"
UNSEEN = ("Traceback", "Task exception was never retrieved", SECRET)


def unattended(site: HostileAuth) -> dict[str, Any]:
    return {"type": "http", "url": site.url,
            "oauth": {"clientId": "app", "clientSecret": SECRET, "grant": "client_credentials"}}


async def test_a_401_naming_cloud_metadata_is_refused_at_signin(tmp_path: Path) -> None:
    async with hostile_auth() as site:
        for named, words in ((CLOUD, "refused to fetch http://169.254.169.254:80"),
                             ("http://127.0.0.1:9/.well-known/oauth-protected-resource", "own origin")):
            site.challenge = f'Bearer resource_metadata="{named}"'
            for entry in ({"type": "http", "url": site.url}, unattended(site)):
                site.seen.clear()
                config = write_config(tmp_path / "config.json", {"cloudy": entry})
                code, out, err = await command(config, "signin", "cloudy", "--no-browser")
                assert code == 1 and out.startswith("Not signed in: the sidecar refused to fetch"), out + err
                assert words in out, out
                assert not any(word in out + err for word in UNSEEN), out + err
                assert site.seen == ["/mcp"]  # nothing fetched on the challenge's word


CORPUS = [
    (ASM, Canned(200, b"[" * 60000), "publishes no metadata"),
    (TOKEN, Canned(200, b'{"a":' * 12000), "token endpoint refused the request (HTTP 200)"),
    (ASM, Canned.of({"issuer": "{origin}", "token_endpoint": "{origin}/token",
                     "token_endpoint_auth_methods_supported": 5, "code_challenge_methods_supported": {"S256": 1}}),
     "metadata"),
    (ASM, Canned(200, b"<html>maintenance</html>"), "publishes no metadata"),
    (TOKEN, Canned(200, b'{"access_token": "' + b"x" * 2_000_000 + b'"}', chunked=True), "larger than 64 KB"),
    (TOKEN, Canned.of({"access_token": ["at"], "token_type": {"bearer": True}, "expires_in": 1e300}),
     "without a bearer access token"),
]


@pytest.mark.parametrize(("slot", "canned", "words"), CORPUS, ids=["deep-asm", "deep-token", "types-asm", "html-asm",
                                                                    "huge-token", "types-token"])
async def test_hostile_metadata_at_signin_is_named(tmp_path: Path, slot: str, canned: Canned, words: str) -> None:
    async with hostile_auth() as site:
        site.answers[slot] = Canned(canned.status, canned.body.replace(b"{origin}", site.origin.encode()),
                                    canned.chunked)
        config = write_config(tmp_path / "config.json", {"hostile": unattended(site)})
        code, out, err = await command(config, "signin", "hostile", "--no-browser")
        assert code == 1 and out.startswith("Not signed in: ") and words in out, out + err
        assert not any(word in out + err for word in UNSEEN), out + err


async def test_a_running_sidecar_keeps_serving_the_others(tmp_path: Path, sdk_server_entry: Any) -> None:
    async with hostile_auth() as cloudy, hostile_auth() as deep:
        cloudy.challenge = f'Bearer resource_metadata="{CLOUD}"'
        deep.answers[ASM] = Canned(200, b"[" * 60000)  # 60,000 deep, inside the size cap
        config = write_config(tmp_path / "config.json", {"plain": sdk_server_entry(name="plain"),
                                                         "cloudy": unattended(cloudy), "deep": unattended(deep)})
        argv = [__import__("sys").executable, "-m", "sidecar", "--config", str(config)]
        async with open_sidecar_client(argv, tmp_path / "stderr.txt") as client:
            await client.wait_for_tools(["plain__echo"])
            with anyio.fail_after(30):
                while not ("169.254.169.254" in client.stderr and ASM in deep.seen):
                    await anyio.sleep(0.05)  # polling the log file: a bounded wait on a condition
            answer = await client.session.call_tool("plain__echo", {"nonce": "still-here"})
            assert not answer.is_error and "still-here" in str(answer.content)
            names = {tool.name for tool in await client.list_all_tools()}
            assert not any(name.startswith(("cloudy__", "deep__")) for name in names)
        log = (tmp_path / "stderr.txt").read_text(errors="replace")
        assert "refused to fetch http://169.254.169.254:80" in log, log
        assert not any(word in log for word in UNSEEN), log
        assert cloudy.seen and set(cloudy.seen) == {"/mcp"}


async def test_a_refresh_passes_the_gate_again(tmp_path: Path) -> None:
    """The token endpoint kept beside the tokens is admitted again on every refresh: one
    that now points at the cloud metadata address is refused in words, unattended."""
    from sidecar.config import load_config
    from sidecar.errors import UpstreamUnavailable
    from sidecar.upstream.oauth import runtime
    from sidecar.upstream.oauth.discovery import canonical_resource
    from sidecar.upstream.oauth.sealed import TokenFile

    async with hostile_auth() as site:
        config = load_config(write_config(tmp_path / "config.json", {"robot": unattended(site)}))
        runtime.use(config)
        first = runtime.source_for(config.servers[0])
        assert first is not None and await first.bearer() == "at-hostile-canary"
        with TokenFile(tmp_path / "mcp-oauth.json", tmp_path / "mcp-oauth.key").edit() as servers:
            entry = servers[canonical_resource(site.url)]
            entry.update(tokenEndpoint="http://169.254.169.254/latest/api/token", expiresAt=0)
        site.seen.clear()
        again = runtime.source_for(config.servers[0])
        assert again is not None
        with pytest.raises(UpstreamUnavailable) as refused:
            await again.bearer()
        assert refused.value.message.startswith("could not renew its sign-in: the sidecar refused to fetch "
                                                "http://169.254.169.254:80"), refused.value.message
        assert site.seen == []


async def test_check_reads_hostile_metadata_as_no_sign_in(tmp_path: Path) -> None:
    """`check` looks for a sign-in at the well-known address: a 60,000-deep or non-JSON
    document there is no sign-in, said in words."""
    async with hostile_auth() as site:
        site.challenge = "Bearer"  # no resource_metadata: check reads the well-known address
        config = write_config(tmp_path / "config.json", {"deep": {"type": "http", "url": site.url}})
        for body in (b"[" * 60000, b'{"authorization_servers": ' * 3000, b"\xff not json"):
            site.answers["/.well-known/oauth-protected-resource/mcp"] = Canned(200, body)
            code, out, err = await command(config, "check", "deep")
            assert code == 1 and out.strip() and not any(word in out + err for word in UNSEEN), out + err
