"""Which config (and so which token file) this process signs in with, and the redactor
every token joins. Set once by the serve path and the commands; read by `runtime` when a
URL server opens. Imports nothing, so setting it costs the stdio start nothing.
"""

from __future__ import annotations

from typing import Any

__all__ = ["current", "use"]

_state: dict[str, Any] = {"config": None, "redactor": None}


def use(config: Any, redactor: Any = None) -> None:
    """Remember the config (a SidecarConfig) and the process's redactor."""
    _state.update(config=config, redactor=redactor)


def current() -> tuple[Any, Any]:
    return _state["config"], _state["redactor"]
