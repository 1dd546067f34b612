"""The documentation site builds in strict mode: a broken link, a missing anchor or a page
left out of the navigation fails here (mkdocs.yml sets each of those checks to warn, and
`--strict` turns every warning into a failure)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(300)


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="the [docs] extra is not installed (./dev test installs it)")
    pytest.importorskip("material", reason="the [docs] extra is not installed (./dev test installs it)")
    env = os.environ | {"NO_MKDOCS_2_WARNING": "1"}
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert (tmp_path / "site" / "reference" / "index.html").exists()
    benchmarks = (tmp_path / "site" / "benchmarks" / "index.html").read_text()
    assert "start -&gt; initialize (ms)" in benchmarks  # the generated table was included
