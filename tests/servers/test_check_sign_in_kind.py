"""`check` decides a sign-in by the fault's type (`SignInNeeded`), never by its words (and a
refusal or an unreachable address by theirs, `Refused` and `Unreachable`): a
real stdio server whose own error says "a person must run `omb-sidecar signin ...`" in its
handshake, or in its tool listing, is a failed server, not one that wants a sign-in. (The
typed path, a signed-in server that wants a wider sign-in at call time, is the
`auth/scope-step-up` scenario of tests/oauth/test_conformance_auth.py.)"""

from __future__ import annotations

import sys

import pytest

from sidecar.config import parse_server
from sidecar_admin.check import check_server

pytestmark = pytest.mark.timeout(60)

WORDS = "needs sign-in: a person must run `omb-sidecar signin look-alike`"
# A server that answers initialize (or, given "list", tools/list) with an error in those words.
SCRIPT = r"""
import json, sys
fail_at = sys.argv[1]
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == fail_at:
        out = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32001, "message": sys.argv[2]}}
    elif msg["method"] == "initialize":
        out = {"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": msg["params"]["protocolVersion"],
               "capabilities": {"tools": {}}, "serverInfo": {"name": "look-alike", "version": "1"}}}
    else:
        out = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}}
    print(json.dumps(out), flush=True)
"""


@pytest.mark.parametrize("fail_at", ["initialize", "tools/list"])
async def test_words_that_name_the_signin_command_are_not_a_sign_in(fail_at: str) -> None:
    entry = {"command": sys.executable, "args": ["-c", SCRIPT, fail_at, WORDS]}
    result = await check_server(parse_server("look-alike", entry))
    assert result.sign_in is False, result
    assert result.outcome == "failed" and "omb-sidecar signin look-alike" in result.reason


LOOK_ALIKE = "HTTP 401: could not be reached, timed out"


async def test_an_address_whose_error_words_look_like_a_refusal_is_a_failed_server() -> None:
    """A refusal (401/403) and an unreachable address are told by the fault's type too: a
    real HTTP server that answers 200 with a JSON-RPC error in those words has failed its
    handshake; it neither refused nor was out of reach."""
    from aiohttp import web

    async def answer(request: web.Request) -> web.Response:
        msg = await request.json()
        if "id" not in msg:
            return web.Response(status=202)
        return web.json_response({"jsonrpc": "2.0", "id": msg["id"],
                                  "error": {"code": -32001, "message": LOOK_ALIKE}})

    app = web.Application()
    app.router.add_post("/mcp", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = runner.addresses[0][1]
        result = await check_server(parse_server("look-alike", {"url": f"http://127.0.0.1:{port}/mcp"}))
    finally:
        await runner.cleanup()
    assert result.outcome == "failed", result
    assert result.sign_in is False and LOOK_ALIKE in result.reason
