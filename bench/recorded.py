"""Figures from one-off measurements that no bench repeats: profiles, before/after comparisons
of a change, scripts run once. Rendered through the same writer as the benches' figures.

Owns `docs/generated/recorded.json`: one entry per table, each with its header, its rows
and its own `measured` (the command or script, and the commit and date of that run), and
the markdown files `recorded-<name>.md` the pages include. A table of a measurement a bench
can repeat does not belong here: its bench writes it (`--docs`). An entry here is replaced
by editing the JSON after running its command again, then `python -m bench.doc_files`.
"""

from __future__ import annotations

from typing import Any

from bench import doc_files

__all__ = ["render_docs"]


def render_docs(figures: dict[str, Any]) -> dict[str, str]:
    """One markdown file per recorded table, by file name."""
    return {f"recorded-{name}.md": doc_files.page("bench.recorded", doc_files.table(entry["header"], entry["rows"]),
                                                   entry["measured"])
            for name, entry in figures["tables"].items()}
