"""`./dev test` when it cannot install redis-server, haproxy and chromium: one line saying what to
install and which tests skip, and the suite goes on (no exit with only apt's error).

The `debian_tools` function of `dev` is run by bash on its own, as a user who is not root
(`id` answers 1000) on a machine where neither program is found.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _function() -> str:
    found = re.search(r"^debian_tools\(\) \{\n.*?^\}\n", (REPO / "dev").read_text(), re.S | re.M)
    assert found, "dev has no debian_tools function"
    return found.group(0)


def _run(tmp_path: Path, present: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    stubs, tools = tmp_path / "stubs", tmp_path / "tools"
    stubs.mkdir()
    tools.mkdir()
    (stubs / "id").write_text("#!/bin/sh\necho 1000\n")
    for name in present:
        (tools / name).write_text("#!/bin/sh\nexit 0\n")
    for path in [*stubs.iterdir(), *tools.iterdir()]:
        path.chmod(0o755)
    env = {"PATH": str(stubs), "OMB_DEV_TOOLS_PATH": str(tools)}
    return subprocess.run(["/bin/bash", "-c", _function() + "debian_tools"], env=env, capture_output=True,
                          text=True, timeout=30)


def test_a_user_who_is_not_root_is_told_what_to_install(tmp_path: Path) -> None:
    run = _run(tmp_path, ())
    assert run.returncode == 0
    lines = run.stderr.splitlines()
    assert len(lines) == 1
    assert "sudo apt-get install redis-server haproxy chromium" in lines[0]
    assert "skip" in lines[0] and "tests/cloud" in lines[0] and "tests/console" in lines[0]


def test_only_the_missing_package_is_named(tmp_path: Path) -> None:
    run = _run(tmp_path, ("redis-server", "chromium"))
    assert run.returncode == 0
    assert "apt-get install haproxy'" in run.stderr and "redis-server" not in run.stderr


def test_nothing_is_said_when_both_are_there(tmp_path: Path) -> None:
    run = _run(tmp_path, ("redis-server", "haproxy", "chromium"))
    assert (run.returncode, run.stderr) == (0, "")
