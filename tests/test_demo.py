"""The README's first command: the demo runs on the bundled example and shows a session."""

import subprocess
import sys

import pytest

pytestmark = pytest.mark.e2e


def test_the_demo_runs_and_shows_what_an_engine_sees() -> None:
    run = subprocess.run([sys.executable, "-m", "sidecar", "demo"], capture_output=True, text=True, timeout=90)
    assert run.returncode == 0, run.stderr[-2000:]
    for seen in ("tools the engine sees", "notes__search_notes", "shaped by the gate", "query_result",
                 "with OMB_AGENTS_TOOL_BRIDGE=1", "find_tool", "use_tool agents__read_room"):
        assert seen in run.stdout, seen
    assert "demo-token-not-a-secret" not in run.stdout + run.stderr


def test_a_reader_that_stops_early_ends_the_demo_quietly() -> None:
    """`omb-sidecar demo | head -1`: no traceback, and status 0."""
    demo = subprocess.Popen([sys.executable, "-m", "sidecar", "demo"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert demo.stdout is not None and demo.stderr is not None
    demo.stdout.readline()
    demo.stdout.close()  # the reader goes away, as `head` does
    errors = demo.stderr.read().decode()
    assert demo.wait(timeout=90) == 0, errors[-2000:]
    assert "Traceback" not in errors and "BrokenPipeError" not in errors
