"""The record of a finished call: its audit line, its debug line and its watchers.

The chain calls `Recorder.record` once per call, after the call ended, from the one
`finally` in `Gate.run` (so a stage bug and a cancellation are recorded too). The audit
line never holds argument values or result text; decision reasons are redacted. The
policy rule that matched is named (`"rule": "#index label"`). A
watcher's bug is logged and never changes the call's answer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from sidecar.config import SidecarConfig
from sidecar.gate.observers.audit import AuditLog
from sidecar.gate.call import ToolCall
from sidecar.redact import Redactor

__all__ = ["Observer", "Recorder"]

log = logging.getLogger(__name__)

Observer = Callable[[ToolCall], None]  # sees each finished call (metrics, traces)


class Recorder:
    def __init__(self, audit: AuditLog, config: SidecarConfig, redact: Redactor) -> None:
        self.audit = audit
        self.bot, self.face = config.bot.id, config.face.name
        self.redact = redact
        self.observers: list[Observer] = []

    @property
    def wanted(self) -> bool:
        """Whether anyone reads the record: an audit file, a watcher or the debug log.
        A gate nobody watches skips recording altogether."""
        return self.audit.path is not None or bool(self.observers) or log.isEnabledFor(logging.DEBUG)

    def record(self, call: ToolCall, task: str | None = None) -> None:
        """`task`: the id (as the engine holds it) of the task whose result this call fetched."""
        self.audit.write({
            "bot": self.bot, "face": self.face,
            "upstream": call.target.alias if call.target else None, "tool": call.ran,
            "via": call.via, "outcome": call.outcome,
            "decisions": [{"stage": s, "action": a, "reason": self.redact(r)} for s, a, r in call.decisions],
            "rule": self.redact(call.rule) if call.rule else None,
            "bytesIn": call.bytes_in, "bytesOut": call.bytes_out, "charge": call.charge or None,
            "held": call.handle is not None, "ms": round(call.seconds * 1000, 2),
            "error": type(call.error).__name__ if call.error else None,
            **({"task": task} if task is not None else {}),
        })
        if log.isEnabledFor(logging.DEBUG):
            log.debug("call %s -> %s %s %s in %.1f ms", call.name, call.ran, call.outcome, call.charge, call.seconds * 1000)
        for observer in self.observers:
            try:
                observer(call)
            except Exception:  # a watcher's bug must not change the call's answer
                log.warning("a call observer failed", exc_info=log.isEnabledFor(logging.DEBUG))
