"""`omb-sidecar servers review NAME` and `servers approve NAME [--tool T ...]`: what changed
in a server's tools since they were approved, and approving what it lists now.

Owns the readable side of pinning: one section per change (changed, new, renamed, or
flagged by the poisoning scan) with the scan's findings and a unified diff of the
definition (description and schemas, pretty-printed with sorted keys, so a diff shows
only real changes), and the approval, which pins the current definitions as reviewed.
Both start the server the way `check` does (bounded, no stderr shown).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from sidecar.trust.pins import Change, Pin, definition_of, judge, pin_tools
from sidecar.config import ServerConfig

__all__ = ["approved_pins", "change_lines", "change_view", "review_lines"]

_KIND = {"changed": "changed since it was approved", "new": "new since the server was approved",
         "renamed": "renamed: the definition of '{source}' under a new name",
         "flagged": "unchanged, but the poisoning scan flags it"}


def _pretty(definition: str | Mapping[str, Any] | None) -> list[str]:
    if definition is None:
        return []
    value = json.loads(definition) if isinstance(definition, str) else definition
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).splitlines()


def change_lines(change: Change, pins: Mapping[str, Pin], tool: Mapping[str, Any]) -> list[str]:
    """One change as a person reads it: what, the findings, and the diff."""
    lines = [f"tool '{change.tool}': {_KIND[change.kind].format(source=change.renamed_from or '')}"]
    if change.old_digest:
        lines.append(f"  digest {change.old_digest[:16]} -> {change.new_digest[:16]}")
    for finding in change.findings:
        lines.append(f"  finding: {finding.rule} in {finding.field}: \"{finding.excerpt}\"")
    before_name = change.renamed_from or change.tool
    before = pins.get(before_name)
    old = _pretty(before.definition) if before is not None and change.kind != "new" else []
    new = _pretty(json.loads(definition_of(tool).definition))
    if change.kind == "flagged":
        lines += [f"  {line}" for line in new]
    else:
        lines += [f"  {line.rstrip()}" for line in difflib.unified_diff(
            old, new, f"approved/{before_name}", f"listed/{change.tool}", lineterm="", n=3)]
    return lines


def change_view(change: Change) -> dict[str, Any]:
    return {"tool": change.tool, "change": change.kind, "oldDigest": change.old_digest,
            "newDigest": change.new_digest, "renamedFrom": change.renamed_from,
            "findings": [{"rule": f.rule, "field": f.field, "excerpt": f.excerpt} for f in change.findings]}


def review_lines(server: ServerConfig, tools: Sequence[dict[str, Any]], pins: Mapping[str, Pin] | None,
                 others: Mapping[str, Sequence[str]]) -> tuple[list[str], list[dict[str, Any]]]:
    """Every change of the listing against the pins, as lines and as JSON."""
    verdict = judge(server.alias, tools, pins or {}, "hold", others)
    by_name = {t.get("name"): t for t in tools}
    known = pins or {}
    lines: list[str] = []
    for change in verdict.changes:
        lines += change_lines(change, known, by_name[change.tool])
        lines.append("")
    removed = sorted(set(known) - set(by_name) - {c.renamed_from for c in verdict.changes})
    for name in removed:
        lines.append(f"tool '{name}': removed (it is simply gone)")
    if not lines:
        lines = [f"'{server.alias}': every tool is as approved ({len(tools)} tools)."]
    elif pins is None:
        lines.insert(0, f"'{server.alias}' has no approved definitions yet: every tool counts as new.")
    return lines, [change_view(c) for c in verdict.changes]


def approved_pins(tools: Sequence[dict[str, Any]], pins: Mapping[str, Pin] | None,
                  only: Sequence[str]) -> tuple[dict[str, Pin], list[str]]:
    """The pins after approving `only` (or everything listed); and the names not listed."""
    if not only:
        return pin_tools(tools, reviewed=True), []
    by_name = {t.get("name"): t for t in tools}
    missing = [name for name in only if name not in by_name]
    updated = dict(pins or {})
    for name in only:
        if name in by_name:
            updated[name] = definition_of(by_name[name], reviewed=True)
    return updated, missing
