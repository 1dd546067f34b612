"""`sidecar.loop`: a process that speaks no TLS loads its event loop without OpenSSL, and
one that could speak it loads as before. Each case runs in a fresh interpreter: what is
tested is which modules load."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping

import pytest

from sidecar.config import parse_config
from sidecar.loop import speaks_no_tls
from sidecar.settings import Settings

STDIO = {"mcpServers": {"notes": {"command": "python3", "args": ["notes.py"]}}}

_RUN = """
import json, sys
from sidecar.config import parse_config
from sidecar.loop import load_without_openssl
from sidecar.settings import Settings
did = load_without_openssl(parse_config(json.loads(sys.argv[1]), {}), Settings.read(json.loads(sys.argv[2])))
loaded = {name: name in sys.modules for name in ("ssl", "_ssl", "_hashlib", "asyncio", "uvloop", "hashlib")}
import hashlib, hmac, secrets
digests = [hashlib.sha256(b"pin").hexdigest(), hashlib.blake2b(b"pin", digest_size=32).hexdigest(),
           hmac.new(b"k", b"m", "sha256").hexdigest(), len(secrets.token_urlsafe(16))]
import asyncio, uvloop
async def echo():  # the loop serves a stdio-like pipe, as the fronts do
    reader, writer = await asyncio.open_connection(*server.sockets[0].getsockname())
    writer.write(b"ping\\n"); line = await reader.readline(); writer.close(); return line.decode()
async def main():
    global server
    async def serve(r, w): w.write(await r.readline()); await w.drain(); w.close()
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    async with server: return await echo()
answer = uvloop.run(main())
import ssl  # a library asking later gets the real module
print(json.dumps({"did": did, "loaded": loaded, "digests": digests, "answer": answer,
                  "real_ssl": hasattr(ssl, "create_default_context") and ssl.SSLContext.__module__ == "ssl"}))
"""


def _run(config: Mapping[str, object], environ: dict[str, str] | None = None) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", _RUN, json.dumps(config), json.dumps(environ or {})],
                         capture_output=True, text=True, check=True, timeout=60).stdout
    found: dict[str, object] = json.loads(out)
    return found


def test_a_stdio_face_loads_its_loop_without_openssl_and_digests_stay_the_same() -> None:
    without = _run(STDIO)
    usual = _run({"mcpServers": {"docs": {"url": "https://example.com/mcp"}}})
    assert without["did"] is True and usual["did"] is False
    assert without["loaded"] == {"ssl": False, "_ssl": False, "_hashlib": False, "asyncio": True, "uvloop": True,
                                 "hashlib": True}
    assert without["digests"] == usual["digests"]  # CPython's own SHA-2 and BLAKE2: the same digests
    assert without["answer"] == usual["answer"] == "ping\n"
    assert without["real_ssl"] is True


@pytest.mark.parametrize(("config", "environ"), [
    ({"mcpServers": {"docs": {"url": "http://127.0.0.1:9/mcp"}}}, {}),  # any URL server: aiohttp loads ssl
    ({**STDIO, "store": {"url": "rediss://cache:6380/0"}}, {}),
    (STDIO, {"OTEL_EXPORTER_OTLP_ENDPOINT": "https://collector:4318"}),
])
def test_a_face_that_could_speak_tls_keeps_the_usual_libraries(config: dict[str, object], environ: dict[str, str]) -> None:
    assert not speaks_no_tls(parse_config(config, {}), Settings.read(environ))


def test_a_stdio_face_without_store_or_traces_speaks_no_tls() -> None:
    assert speaks_no_tls(parse_config(STDIO, {}), Settings.read({}))
