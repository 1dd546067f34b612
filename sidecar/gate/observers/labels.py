"""The one door for metric label values: `/metrics` (`sidecar.gate.observers.metrics`) and the
OpenTelemetry histograms (`sidecar.gate.observers.tracing`) pass every value through
`label_values`, which cuts it to `LABEL_CAP` characters. A cut value keeps its first
characters and a digest of the whole, so two long values stay two series. Standard
library only: it loads with either front's optional extra or with neither.
"""

from __future__ import annotations

import hashlib

__all__ = ["LABEL_CAP", "label_values"]

LABEL_CAP = 64  # an engine-visible tool name fits 64 characters; so does every other label the sidecar writes
_KEPT = LABEL_CAP - 9  # a cut value: its first characters, "~", 8 hex digits of its digest


def label_values(*values: str) -> list[str]:
    """Each value as a label may hold it: itself when short, else cut with a digest."""
    return [value if len(value) <= LABEL_CAP else _cut(value) for value in values]


def _cut(value: str) -> str:
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{value[:_KEPT]}~{digest}"
