"""Every command block the docs mark runnable runs, against the installed wheel.

Each block (see `tests/docs/runnable.py` for the marker) runs with `bash -euo pipefail` in a
folder of its own outside the checkout, with the clean venv of `tests/install/` first on
`PATH` (the wheel of this checkout, no extras), and a fresh `HOME` and `TMP`: the docs show
what a new user types, and this is what that user gets. A block whose `needs` command fails
is skipped with the command named (a feature that another branch is still adding).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.docs.runnable import REPO, Block, all_blocks
from tests.install.clean_venv import CleanInstall, clean_env, clean_install  # noqa: F401 - the fixture

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

BLOCKS = all_blocks()
# What the docs must let a reader run, each as a marked block somewhere.
MUST_RUN = ("omb-sidecar --help", "omb-sidecar demo", "omb-sidecar check", "omb-sidecar import",
            "--dry-run", "omb-sidecar add", "omb-sidecar --version")


def test_the_docs_mark_the_blocks_a_new_user_needs() -> None:
    marked = "\n".join(block.code for block in BLOCKS)
    assert [command for command in MUST_RUN if command not in marked] == []


def _environment(install: CleanInstall, where: Path) -> dict[str, str]:
    env = clean_env(where / "home")
    env["PATH"] = f"{install.venv / 'bin'}{os.pathsep}{env['PATH']}"
    env["TMP"] = str(where / "tmp")
    return env


def _bash(code: str, where: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=where / "work", env=env, text=True,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=timeout)


@pytest.mark.parametrize("block", BLOCKS, ids=[block.name for block in BLOCKS])
def test_a_runnable_block_runs(block: Block, clean_install: CleanInstall, tmp_path: Path) -> None:
    assert REPO not in tmp_path.parents
    for folder in ("home", "tmp", "work"):
        (tmp_path / folder).mkdir()
    env = _environment(clean_install, tmp_path)
    if block.needs and _bash(block.needs, tmp_path, env, 60).returncode != 0:
        pytest.skip(f"{block.name} needs `{block.needs}`, which this build does not have yet")
    run = _bash(block.code, tmp_path, env, block.timeout)
    assert run.returncode == 0, f"{block.name} exited {run.returncode}:\n{block.code}\n--- output ---\n{run.stdout[-4000:]}"
    if block.expect is not None:
        assert block.expect in run.stdout, f"{block.name}: {block.expect!r} not in its output:\n{run.stdout[-4000:]}"
