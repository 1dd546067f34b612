"""The things being measured, and how each is started.

Owns the command line of every candidate (direct, relay, py-floor, py-threads,
sidecar, fastmcp, sdk proxy) for a given set of upstreams, and the one config file format
they share (`{"mcpServers": {...}, "budgets": {...}}`, the sidecar's contract).
A candidate either merges several upstreams itself (sidecar, fastmcp) or is
run once per upstream, all at the same time (direct, relay); the SDK proxy and
the two Python floors (`floor_proxy.py` on asyncio, `thread_floor.py` on blocking threads)
serve exactly one upstream and sit out the many-upstream cases.

Refuses to start anything: it returns argv lists and says why a candidate is
unavailable (`missing`) instead of failing later.

Which interpreter starts them (`Launch`): a run measures what a user installs by default
(`from_wheel`: the checkout's wheel built and installed with its dependencies into a venv
outside the checkout; the sidecar started as its `omb-sidecar` command, every Python
upstream, relay and Python floor by that venv's interpreter). The dev venv's editable install
puts a finder on every interpreter's start there (about 12 ms each on this machine), which
the sidecar's path would pay twice in series and direct once. `CHECKOUT` starts everything
from the running interpreter and the checkout's sources instead. The fastmcp and SDK proxies
need packages the wheel does not depend on: they keep the running interpreter (their
upstream still starts from the wheel's venv).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.catalogs import CatalogSpec

__all__ = ["BENCH_DIR", "CHECKOUT", "REPO_ROOT", "Candidate", "Launch", "Upstream", "all_candidates",
           "compile_sidecar", "from_wheel", "launch", "upstream_argv", "use"]

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
PYTHON = sys.executable  # the running interpreter (the fastmcp and SDK proxies, the in-memory benchmarks)


@dataclass(frozen=True)
class Launch:
    """What starts the candidates: `python` runs every Python upstream, the relay and
    py-floor; `sidecar` is the sidecar's command before its arguments; `where` says which
    install they come from (the report prints it)."""

    python: str
    sidecar: tuple[str, ...]
    where: str


CHECKOUT = Launch(PYTHON, (PYTHON, "-m", "sidecar"), "the checkout's sources, run by the running interpreter")
_LAUNCH = [CHECKOUT]


def launch() -> Launch:
    """How candidates start now (`use` changes it; `CHECKOUT` until then)."""
    return _LAUNCH[0]


def use(how: Launch) -> Launch:
    """Start every later candidate as `how` says; returns the previous way."""
    previous, _LAUNCH[0] = _LAUNCH[0], how
    return previous


def from_wheel(workdir: Path) -> Launch:
    """The checkout's wheel installed (with its dependencies, kept between runs) into the
    bench's venv outside the checkout, the way the install tests build theirs
    (`tests/install/clean_venv.py`); built into `workdir` only when the package's sources
    changed since the venv's last install. The sidecar is then its `omb-sidecar` command, as
    a user starts it."""
    from tests.install.clean_venv import SOURCES, build_wheel, cache_key, cache_root, install

    root = cache_root().parent / "bench-venv"
    venv = root / cache_key()
    tree, stamp = _sources_digest(SOURCES), venv / "BENCH_SOURCES"
    if not (venv / "READY").exists() or not stamp.exists() or stamp.read_text() != tree:
        workdir.mkdir(parents=True, exist_ok=True)
        install(build_wheel(workdir), root=root)
        stamp.write_text(tree)
    return Launch(str(venv / "bin" / "python"), (str(venv / "bin" / "omb-sidecar"),),
                  f"the built wheel, installed in {venv} (the sidecar as its omb-sidecar command)")


def _sources_digest(sources: tuple[str, ...]) -> str:
    """A digest of every file the wheel is built from (names and bytes; caches left out)."""
    import hashlib

    digest = hashlib.sha256()
    for name in sources:
        origin = REPO_ROOT / name
        files = sorted(origin.rglob("*")) if origin.is_dir() else [origin]
        for path in files:
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(f"{path.relative_to(REPO_ROOT)}\0{path.stat().st_size}\0".encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class Upstream:
    """One fast upstream of a case: its alias and its catalog."""

    alias: str
    spec: CatalogSpec


def upstream_argv(spec: CatalogSpec) -> list[str]:
    return [launch().python, str(BENCH_DIR / "fast_upstream.py"), *spec.argv()]


def write_config(upstreams: list[Upstream], workdir: Path, budget_chars: int = 8000) -> Path:
    """The shared mcpServers config for `upstreams`; returns its path."""
    servers = {}
    for up in upstreams:
        argv = upstream_argv(up.spec)
        servers[up.alias] = {"command": argv[0], "args": argv[1:], "env": {}}
    config = {"mcpServers": servers, "budgets": {"resultChars": budget_chars}}
    name = "config-" + "-".join(up.alias for up in upstreams)[:80] + ".json"
    path = workdir / name
    path.write_text(json.dumps(config, indent=1))
    return path


@dataclass(frozen=True)
class Candidate:
    """A way to reach the upstreams: its name and how to launch it.

    `merges` is True when one process serves several upstreams; otherwise a
    many-upstream case runs one process per upstream at the same time and
    reports the wall time until the last one is complete (the max, under the
    same CPU contention the merging candidates face).
    """

    name: str
    merges: bool
    single_only: bool = False
    missing: str | None = None
    relay_mode: str = "splice"

    def argv(self, upstreams: list[Upstream], workdir: Path) -> list[str]:
        """Command line serving `upstreams` (one, unless `merges`)."""
        if not self.merges and len(upstreams) != 1:
            raise ValueError(f"{self.name} serves one upstream at a time")
        if self.name.startswith("relay"):
            return _relay(upstreams[0], self.relay_mode)
        return _LAUNCHERS[self.name](upstreams, workdir)


def _direct(upstreams: list[Upstream], workdir: Path) -> list[str]:
    return upstream_argv(upstreams[0].spec)


def _relay(upstream: Upstream, mode: str) -> list[str]:
    # -S: the floor pays for an interpreter, not for site-packages (uvloop is the one mode needing them)
    flags = [] if mode == "uvloop" else ["-S"]
    return [launch().python, *flags, str(BENCH_DIR / "relay.py"), "--mode", mode, "--",
            *upstream_argv(upstream.spec)]


def _floor(upstreams: list[Upstream], workdir: Path) -> list[str]:
    return [launch().python, str(BENCH_DIR / "floor_proxy.py"), "--", *upstream_argv(upstreams[0].spec)]


def _threads(upstreams: list[Upstream], workdir: Path) -> list[str]:
    return [launch().python, str(BENCH_DIR / "thread_floor.py"), "--", *upstream_argv(upstreams[0].spec)]


def _sdk(upstreams: list[Upstream], workdir: Path) -> list[str]:
    return [PYTHON, str(BENCH_DIR / "sdk_proxy.py"), "--", *upstream_argv(upstreams[0].spec)]


def _sidecar(upstreams: list[Upstream], workdir: Path) -> list[str]:
    return [*launch().sidecar, "--config", str(write_config(upstreams, workdir))]


def _fastmcp(upstreams: list[Upstream], workdir: Path) -> list[str]:
    config = write_config(upstreams, workdir)
    return [PYTHON, str(BENCH_DIR / "fastmcp_proxy.py"), "--config", str(config)]


_LAUNCHERS = {"direct": _direct, "py-floor": _floor, "py-threads": _threads, "sidecar": _sidecar,
              "fastmcp": _fastmcp, "sdk-proxy": _sdk}


def compile_sidecar() -> bool:
    """Write the sidecar's bytecode, as `pip install` does: start-up is then measured as a
    user meets it, even where PYTHONDONTWRITEBYTECODE keeps a checkout's cache stale (a
    module whose cache is stale is compiled from source at every start)."""
    import compileall

    return bool(compileall.compile_dir(str(REPO_ROOT / "sidecar"), quiet=1))


def _sidecar_missing() -> str | None:
    if not (REPO_ROOT / "sidecar" / "__main__.py").exists():
        return "sidecar/__main__.py does not exist yet"
    return None


def _module_missing(module: str) -> str | None:
    if importlib.util.find_spec(module) is None:
        return f"python package {module!r} is not installed (pip install -e '.[bench]')"
    return None


def all_candidates(relay_modes: bool = False) -> list[Candidate]:
    """Every candidate in report order; unavailable ones carry `missing`.

    `relay_modes` adds the relay's other copy strategies (select, uvloop) after
    the default one, to show that splice is the lowest floor on this machine.
    """
    extra = [Candidate(f"relay-{mode}", merges=False, relay_mode=mode)
             for mode in ("select", "uvloop")] if relay_modes else []
    return [
        Candidate("direct", merges=False),
        Candidate("relay", merges=False),
        *extra,
        Candidate("py-floor", merges=False, single_only=True, missing=_module_missing("uvloop")),
        Candidate("py-threads", merges=False, single_only=True),  # needs msgspec only, as the wheel does
        Candidate("sidecar", merges=True, missing=_sidecar_missing()),
        Candidate("fastmcp", merges=True, missing=_module_missing("fastmcp")),
        Candidate("sdk-proxy", merges=False, single_only=True, missing=_module_missing("mcp")),
    ]
