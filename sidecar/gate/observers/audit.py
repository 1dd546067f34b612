"""The audit record: one JSON line per call, in a size-bounded rotating file.

A line says who called what, what the gate decided, sizes in and out, whether the result
was held, how long it took and the kind of error. It never holds argument values or
result text, so no secret the model or an upstream handles can land in it.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any

import msgspec

from sidecar.config import Audit

__all__ = ["AuditLog"]

log = logging.getLogger(__name__)


class AuditLog:
    def __init__(self, audit: Audit) -> None:
        self.path = Path(audit.file) if audit.file else None
        self.max_bytes = audit.max_bytes
        self.keep = max(0, audit.keep)
        self._file: Any = None
        self._size = 0
        self._broken = False

    def write(self, record: dict[str, Any]) -> None:
        if self.path is None or self._broken:
            return
        line = msgspec.json.encode({"time": round(time.time(), 3), **record}) + b"\n"
        try:
            if self._file is None:
                self._open()
            if self._size + len(line) > self.max_bytes and self._size:
                self._rotate()
            self._file.write(line)
            self._file.flush()
            self._size += len(line)
        except OSError as exc:
            self._broken = True
            log.warning("audit file could not be written (%s); auditing stops", exc.strerror)

    def _open(self) -> None:
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._file = os.fdopen(descriptor, "ab")
        self._size = self._file.tell()

    def _rotate(self) -> None:
        assert self.path is not None
        self._file.close()
        for index in range(self.keep - 1, 0, -1):
            older = self.path.with_name(f"{self.path.name}.{index}")
            if older.exists():
                older.replace(self.path.with_name(f"{self.path.name}.{index + 1}"))
        if self.keep:
            self.path.replace(self.path.with_name(f"{self.path.name}.1"))
        else:
            self.path.unlink()
        self._open()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
