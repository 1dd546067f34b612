"""Policy hooks loaded by the sidecar in the gate tests (`tests.gate.hooks:<name>`)."""

from __future__ import annotations

import threading
import time
from typing import Any

RELEASE = threading.Event()  # set by the test that uses `block`, so its thread ends with the test


def refuse_sleep(view: Any) -> dict[str, str]:
    if view.tool.endswith("__sleep"):
        return {"action": "deny", "reason": f"no sleeping for {view.bot}"}
    return {"action": "allow"}


async def approve_consequential(view: Any) -> dict[str, str]:
    return {"action": "allow", "reason": "approved" if view.confirmation_required else ""}


def explode(view: Any) -> dict[str, str]:
    raise RuntimeError("the hook broke")


def stall(view: Any) -> dict[str, str]:
    time.sleep(30)
    return {"action": "allow"}


def block(view: Any) -> dict[str, str]:
    RELEASE.wait(30)
    return {"action": "allow"}


def nonsense(view: Any) -> str:
    return "sure, go ahead"


def tamper(view: Any) -> dict[str, str]:
    view.arguments["nonce"] = "tampered"
    return {"action": "allow"}
