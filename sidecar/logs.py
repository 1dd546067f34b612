"""The process's one log sink: stderr, every line through the redactor first.

Owns the handler the serve path and the admin commands both install (the format
`omb-sidecar LEVEL logger: message`, the level, the redacting filter). Refuses nothing.
"""

from __future__ import annotations

import logging
import sys

from sidecar.redact import RedactingFilter, Redactor

__all__ = ["setup_logging"]


def setup_logging(level: str, redactor: Redactor) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("omb-sidecar %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter(redactor))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
