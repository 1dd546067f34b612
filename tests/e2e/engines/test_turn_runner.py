"""The turn runner's own checks are not vacuous: a process left behind by a turn is found
and reported (then killed), and a secret on an argv is seen in each encoded form."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

RUNNER_DIR = Path(__file__).resolve().parent

LEAVE_ONE_BEHIND = """
import subprocess, sys, time
sys.path.insert(0, {here!r})
import engine_turn
engine_turn.SETTLE_GRACE = 1.0
engine_turn._become_subreaper()
subprocess.run(["sh", "-c", "sleep 60 & exit 0"])  # the sleep is orphaned at once
sampler = engine_turn.ArgvSampler([{secret!r}])
sampler.start()
subprocess.run(["sh", "-c", "sleep 0.3", "ignored", {secret!r}])
sampler.stop.set(); sampler.join()
seconds, survivors = engine_turn._settle(__import__("os").getpid())
print(json.dumps({{"survivors": survivors, "hits": sampler.hits, "left": engine_turn._descendants(__import__("os").getpid())}}))
"""


def test_a_survivor_and_a_secret_on_argv_are_both_reported() -> None:
    secret = f"CANARY{uuid.uuid4().hex}"
    code = "import json\n" + LEAVE_ONE_BEHIND.format(here=str(RUNNER_DIR), secret=secret)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert len(report["survivors"]) == 1 and "sleep 60" in report["survivors"][0]
    assert report["left"] == []  # killed after being reported
    assert report["hits"] and all(secret in hit for hit in report["hits"])
