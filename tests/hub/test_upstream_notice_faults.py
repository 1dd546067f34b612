"""A notification the sidecar chokes on, from a real stdio upstream through the real sidecar
process: it ends there (logged once, by kind, without its words), and the upstream keeps
serving calls on the same connection."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

HOSTILE = Path(__file__).resolve().parents[1] / "upstreams" / "hostile_server.py"
SECRET = "sk-live-7Q2w9E4r1T6y3U8i"  # configured for the upstream: never in the sidecar's words
# msgspec reads a number past a double's range as a validation fault, not a decode fault: the
# frame itself passes (its params stay raw), and the fault rises only where params are read.
OUT_OF_RANGE = "1e999"
CHOKING = {
    "notifications/message": '{"level":"info","data":%s,"note":"%s"}',
    "notifications/resources/updated": '{"uri":"mem://x","n":%s,"note":"%s"}',
    "notifications/cancelled": '{"requestId":1,"n":%s,"note":"%s"}',
    "notifications/tasks/status": '{"taskId":"t","n":%s,"note":"%s"}',
    "notifications/elicitation/complete": '{"elicitationId":"e","n":%s,"note":"%s"}',
}


def _note(method: str) -> str:
    params = CHOKING[method] % (OUT_OF_RANGE, SECRET)
    return '{"jsonrpc":"2.0","method":"%s","params":%s}' % (method, params)


def _text(answer: dict[str, Any]) -> str:
    assert "result" in answer, answer
    return " ".join(c.get("text", "") for c in answer["result"].get("content", []))


# These read their params where no decode fault was caught before; the others drop a notice
# they cannot read, silently, as they did.
CHOKED_ON = {"notifications/message", "notifications/resources/updated"}
FINE = '{"jsonrpc":"2.0","id":{id},"result":{"content":[{"type":"text","text":"fine"}]}}'


@pytest.mark.parametrize("method", sorted(CHOKING))
async def test_a_notification_the_sidecar_chokes_on_ends_there_and_the_upstream_keeps_serving(
        method: str, raw_sidecar: Any, write_config: Any) -> None:
    entry = {"command": sys.executable, "args": [str(HOSTILE)], "env": {"API_TOKEN": SECRET}}
    async with raw_sidecar(write_config({"h": entry})) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["h__say"])
        for n in range(3):
            with anyio.fail_after(10):
                assert _text(await sc.call("h__say", {"lines": [_note(method), FINE]})) == "fine"
                assert _text(await sc.call("h__echo", {"nonce": f"after-{n}"})) == f"after-{n}"
        logged = sc.stderr.count(f"its {method} could not be handled")
        assert logged == (1 if method in CHOKED_ON else 0), sc.stderr  # the first logged, by kind only
        assert "restarting" not in sc.stderr and "Traceback" not in sc.stderr
        assert SECRET not in sc.stderr
