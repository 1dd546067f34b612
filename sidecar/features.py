"""Features that need a package of their own, and what to do when it is not installed.

Owns the table of such features (the package each needs, the tools it lists, the extra
that installs it), the one question "is it installed?" (asked of the import system without
importing anything, so a feature that is off costs nothing), the one log line per missing
feature at start-up, and the words for a request that met a missing module anyway.
Refuses to list a tool whose package is missing: the face asks `listable` first.

A later optional feature adds one `Feature` to `FEATURES`; nothing else changes.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from functools import cache

import msgspec

__all__ = ["Feature", "FEATURES", "installed", "listable", "log_missing", "missing_module_words"]

log = logging.getLogger(__name__)


class Feature(msgspec.Struct, frozen=True):
    name: str
    module: str  # the top-level module the feature imports
    tools: tuple[str, ...]  # the sidecar's own tools it lists
    extra: str | None = None  # the pip extra that installs it; None: a core dependency

    @property
    def install(self) -> str:
        if self.extra is None:
            return "reinstall omb-sidecar (pip install --force-reinstall omb-sidecar)"
        return f"pip install 'omb-sidecar[{self.extra}]'"


FEATURES: tuple[Feature, ...] = (
    Feature("query", "jmespath", ("query_result",), extra="query"),
    Feature("http", "aiohttp", (), extra="http"),  # --http and URL upstreams: refused at start-up (the CLI)
)


@cache
def installed(module: str) -> bool:
    """Whether `module` can be imported, asked without importing it."""
    import importlib.util  # asked after the early `initialize` answer (log_missing), so loaded then

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def listable(tool: str, features: Iterable[Feature] = FEATURES) -> bool:
    """False for a tool whose feature's package is missing."""
    return all(installed(f.module) for f in features if tool in f.tools)


def log_missing(features: Iterable[Feature] = FEATURES) -> list[Feature]:
    """One warning per listing feature whose package is missing; returns them."""
    missing = [f for f in features if f.tools and not installed(f.module)]
    for feature in missing:
        log.warning("%s is not listed: the package '%s' is not installed (%s)",
                    ", ".join(feature.tools), feature.module, feature.install)
    return missing


def missing_module_words(method: str, module: str | None, features: Iterable[Feature] = FEATURES) -> str:
    """What a request that needed a missing module is told (no path, no traceback)."""
    top = (module or "").split(".")[0]
    owner = next((f for f in features if f.module == top), None)
    fix = owner.install if owner is not None else "reinstall omb-sidecar with its dependencies"
    return f"{method} cannot run here: the package '{top or 'unknown'}' is not installed ({fix})"
