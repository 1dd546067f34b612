"""The JSON-lines record a test server keeps of what it saw (`--events FILE`): one line
per event, written with one append so concurrent writers never interleave a line."""

from __future__ import annotations

import json
import os
from typing import Any


class Events:
    def __init__(self, path: str | None) -> None:
        self.path = path

    def emit(self, event: str, **fields: Any) -> None:
        if self.path:
            line = json.dumps({"event": event, "pid": os.getpid(), **fields}, default=str) + "\n"
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line.encode())
            finally:
                os.close(fd)
