"""A fresh virtual environment outside the checkout holding only the built wheel and its
runtime dependencies: what `pip install omb-sidecar` gives a new user.

The venv is cached under `~/.cache/omb-sidecar/clean-venv/<key>` (`OMB_CLEAN_VENV_CACHE`
moves the root); the key is the runtime dependency list of pyproject.toml, the Python
version and the checkout's path, so changing a dependency builds a new venv from nothing,
and two checkouts tested at once never install over each other's wheel. Every run builds the wheel
again from a copy of the package sources and reinstalls only it (`--no-deps`), so the
sources under test are always the checkout's and a warm run costs seconds.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# What the wheel is built from: everything else in the checkout must not matter.
SOURCES = ("pyproject.toml", "README.md", "sidecar", "sidecar_admin", "shims")
PIP_SECONDS = 600.0  # a cold venv downloads aiohttp, cryptography and friends once


@dataclass(frozen=True)
class CleanInstall:
    venv: Path
    wheel: Path

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def sidecar(self) -> Path:
        return self.venv / "bin" / "omb-sidecar"


_BUILT: dict[str, CleanInstall] = {}  # one build per test run, whichever module asks first


@pytest.fixture(scope="session")
def clean_install(tmp_path_factory: pytest.TempPathFactory) -> CleanInstall:
    """The wheel of this checkout in the cached clean venv (import this fixture to use it;
    each importing module gets its own fixture, so the build itself is kept here)."""
    if "wheel" not in _BUILT:
        _BUILT["wheel"] = install(build_wheel(tmp_path_factory.mktemp("wheel")))
    return _BUILT["wheel"]


def runtime_dependencies() -> list[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return sorted(project.get("dependencies", []))


def cache_key() -> str:
    # The checkout is part of the key: each run reinstalls its own wheel, so two checkouts
    # tested at once (worktrees side by side) must not take turns replacing it in one venv.
    said = json.dumps([runtime_dependencies(), sys.version_info[:2], sys.platform, str(REPO)])
    return hashlib.sha256(said.encode()).hexdigest()[:16]


def cache_root() -> Path:
    default = Path.home() / ".cache" / "omb-sidecar" / "clean-venv"
    return Path(os.environ.get("OMB_CLEAN_VENV_CACHE") or default)


def clean_env(home: Path) -> dict[str, str]:
    """A user's shell: no PYTHONPATH, no venv of the tests, a home of its own."""
    env = {k: os.environ[k] for k in ("LANG", "LC_ALL", "TZ", "TMPDIR") if k in os.environ}
    env["PATH"] = os.defpath
    env["HOME"] = str(home)
    return env


def build_wheel(workdir: Path) -> Path:
    source = workdir / "source"
    source.mkdir()
    for name in SOURCES:
        origin = REPO / name
        if origin.is_dir():
            shutil.copytree(origin, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(origin, source / name)
    out = workdir / "wheel"
    _pip(sys.executable, "wheel", "--no-deps", "-w", str(out), str(source))
    (wheel,) = out.glob("omb_sidecar-*.whl")
    return wheel


def install(wheel: Path, root: Path | None = None) -> CleanInstall:
    """The cached venv with this wheel in it (created, with its dependencies, on first use);
    under `root` instead of `cache_root()` when given (the benchmark keeps its own)."""
    root = root or cache_root()
    root.mkdir(parents=True, exist_ok=True)
    venv = root / cache_key()
    with _locked(root / f"{venv.name}.lock"):
        if not (venv / "READY").exists():
            shutil.rmtree(venv, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
            _pip(str(venv / "bin" / "python"), "install", str(wheel))
            (venv / "READY").write_text(" ".join(runtime_dependencies()) + "\n")
        else:
            _pip(str(venv / "bin" / "python"), "install", "--no-deps", "--force-reinstall", str(wheel))
    return CleanInstall(venv, wheel)


def _pip(python: str, *args: str) -> None:
    argv = [python, "-m", "pip", "--disable-pip-version-check", "-q", *args]
    run = subprocess.run(argv, capture_output=True, text=True, timeout=PIP_SECONDS, cwd="/")
    if run.returncode != 0:
        raise AssertionError(f"pip {args[0]} failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}")


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
