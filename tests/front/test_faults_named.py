"""No tool is listed that cannot work, and no request gets a bare "internal error".

Real sidecar processes on stdio, started through a two-line wrapper that either hides a
package (`sys.modules[name] = None`: not importable, and `find_spec` says so) or swaps in a
handler that raises, then runs the real CLI. Every log line of a request is written before
its answer, so the stderr read by the time the process has stopped holds them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO

EXAMPLES = REPO / "sidecar" / "examples"
CANARY = "canary-fault-secret-5d1e9b"
HIDE_JMESPATH = "import sys; sys.modules['jmespath'] = None\n"
RAISE_IN_PROMPTS_LIST = (
    "from sidecar.front import methods\n"
    "async def broken(d, req, params):\n"
    f"    raise KeyError('{CANARY}')\n"
    "methods.METHODS['prompts/list'] = broken\n"
)
RUN_CLI = "import sys; from sidecar.cli import main; sys.exit(main(sys.argv[1:]))\n"


@pytest.fixture
def notes_config(write_config: Callable[..., Path]) -> Path:
    entry = {"command": sys.executable, "args": [str(EXAMPLES / "notes.py")], "env": {"NOTES_TOKEN": CANARY}}
    return write_config({"notes": entry})


def _argv(prelude: str, config: Path, *extra: str) -> list[str]:
    return [sys.executable, "-c", prelude + RUN_CLI, "--config", str(config), *extra]


async def test_a_missing_package_hides_its_tool_and_says_which_extra(raw_process: Any, notes_config: Path) -> None:
    async with raw_process(_argv(HIDE_JMESPATH, notes_config)) as sc:
        await sc.initialize()
        names = {t["name"] for t in await sc.wait_for_tools(["notes__export_notes"])}
        assert "query_result" not in names
        view = json.loads((await sc.call("notes__export_notes"))["result"]["content"][0]["text"])
        answer = await sc.call("query_result", {"handle": view["handle"], "query": "[0].title"})
        lines = [line for line in sc.stderr.splitlines() if "is not listed" in line]
    assert len(lines) == 1 and "'jmespath'" in lines[0] and "omb-sidecar[query]" in lines[0], sc.stderr
    message = answer["error"]["message"]
    assert "internal error" not in message
    assert message.startswith("tools/call cannot run here: the package 'jmespath' is not installed"), message
    assert "Traceback" not in sc.stderr


async def test_an_unexpected_fault_names_the_method_and_its_kind(raw_process: Any, notes_config: Path) -> None:
    async with raw_process(_argv(RAISE_IN_PROMPTS_LIST, notes_config)) as sc:
        await sc.initialize()
        answer = await sc.request("prompts/list")
        still = await sc.request("tools/list")  # and it keeps serving
    assert answer["error"]["code"] == -32603
    assert answer["error"]["message"].startswith("prompts/list failed: an unexpected KeyError"), answer
    assert "result" in still
    assert "prompts/list failed: KeyError" in sc.stderr and "Traceback" not in sc.stderr
    assert CANARY not in json.dumps(answer) + sc.stderr


async def test_the_traceback_goes_to_the_log_at_debug_only_redacted(raw_process: Any, notes_config: Path) -> None:
    async with raw_process(_argv(RAISE_IN_PROMPTS_LIST, notes_config, "--log-level", "DEBUG")) as sc:
        await sc.initialize()
        answer = await sc.request("prompts/list")
    assert "Traceback" in sc.stderr and "[redacted]" in sc.stderr
    assert CANARY not in json.dumps(answer) + sc.stderr
