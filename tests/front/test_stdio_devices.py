"""stdin or stdout on a character device that is no terminal (`/dev/null`): the sidecar
reads and writes it directly, as a regular file, and ends cleanly. The event loop's poller
refuses such a device, and uvloop aborted the whole process on it (exit 134)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

INITIALIZE = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
              b'"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n')


def _serve(stdin: object, stdout: object, tmp_path: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "sidecar", "--examples"], stdin=stdin, stdout=stdout,
                          stderr=subprocess.PIPE, timeout=60, cwd=tmp_path)


def test_stdout_on_dev_null_is_served_and_ends_cleanly(tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(INITIALIZE)
    with requests.open("rb") as stdin, open("/dev/null", "wb") as devnull:
        run = _serve(stdin, devnull, tmp_path)
    assert run.returncode == 0, run.stderr.decode(errors="replace")[-2000:]


def test_stdin_on_dev_null_ends_cleanly(tmp_path: Path) -> None:
    with open("/dev/null", "rb") as devnull:
        run = _serve(devnull, subprocess.PIPE, tmp_path)
    assert run.returncode == 0, run.stderr.decode(errors="replace")[-2000:]
