"""omb-sidecar: an MCP proxy that runs beside an AI agent engine.

Importing the package loads nothing heavy: the runtime path never imports the
`mcp` SDK, pydantic, aiohttp or jmespath (a test pins this).
"""

from __future__ import annotations

TYPE_CHECKING = False  # as typing says it, without importing typing (2 ms) before the first spawn

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__version__ = "0.1.0"
__all__ = ["__version__", "names_on_first_use"]


def names_on_first_use(package: str, homes: dict[str, str]) -> Callable[[str], Any]:
    """A package's `__getattr__` (PEP 562) that imports each name's module on first use:
    `homes` maps a name to the submodule of `package` that defines it. A name found is
    kept in the package, so the next lookup is a plain attribute."""
    import sys

    def find(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib  # at the first name looked up: `importlib` loads `warnings`, before the first spawn else

        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return find
