"""Which config (and so which token file) this process signs in with, the redactor every
token joins, and who keeps a refused sign-in for the next start. Set once by the serve
path and the commands; read by `runtime` when a URL server opens. Imports nothing, so
setting it costs the stdio start nothing.

The keeper (`keep_refusals`) is the health file's `record_start`, handed in by the CLI
and the admin commands: the upstream layer writes no health record of its own.
"""

from __future__ import annotations

from typing import Any

__all__ = ["current", "keep_refusals", "refusal_keeper", "use"]

_state: dict[str, Any] = {"config": None, "redactor": None, "keeper": None}


def use(config: Any, redactor: Any = None) -> None:
    """Remember the config (a SidecarConfig) and the process's redactor."""
    _state.update(config=config, redactor=redactor)


def current() -> tuple[Any, Any]:
    return _state["config"], _state["redactor"]


def keep_refusals(keeper: Any) -> None:
    """`keeper(config, server, ok=False, reason=words)` records a refused sign-in, so the
    next start leaves that server out until a person signs in."""
    _state["keeper"] = keeper


def refusal_keeper() -> Any:
    return _state["keeper"]
