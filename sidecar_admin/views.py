"""What the server commands print: the import result, a check, the server list.

Owns the words and the JSON shapes. Refuses to show any env or header value: an entry is
shown by its names only, and an argument that follows a credential-looking flag
(`--api-key X`, `--token=X`) is masked.
"""

from __future__ import annotations

import time
from typing import Any

from sidecar.config import rules
from sidecar.mounts.health import CheckResult, HealthRecord
from sidecar.mounts.plan import period_words
from sidecar_admin.importer import Added, ImportResult
from sidecar_admin.store import masked_args

__all__ = ["import_lines", "import_json", "check_lines", "server_view", "server_lines"]

_KIND_WORDS = {"stdio": "command", "http": "Streamable HTTP", "sse": "SSE"}


def _where(entry: dict[str, Any]) -> str:
    if isinstance(entry.get("url"), str):
        kind = "SSE" if entry.get("type") == "sse" else "Streamable HTTP"
        return f"{kind} {entry['url']}"
    words = [str(entry.get("command", "")), *masked_args(entry.get("args") or [])]
    return "command `" + " ".join(w if w and " " not in w else repr(w) for w in words) + "`"


# -- add ------------------------------------------------------------------------------------


def import_lines(result: ImportResult) -> list[str]:
    lines: list[str] = []
    for added in result.added:
        lines.append(f"Added '{added.name}': {_where(added.entry)}, off until it passes a check")
        lines += [f"  needs a value: {need}" for need in added.needs]
        lines += [f"  note: {note}" for note in added.notes]
    lines += [f"Not added: {dropped}" for dropped in result.dropped]
    if not result.added and not result.dropped:
        lines.append("Nothing to add.")
    return lines


def import_json(result: ImportResult, checks: dict[str, CheckResult]) -> dict[str, Any]:
    def one(added: Added) -> dict[str, Any]:
        view = server_view(added.name, added.entry)
        view["needs"] = [str(n) for n in added.needs]
        view["notes"] = added.notes
        if added.name in checks:
            view["check"] = check_json(checks[added.name])
        return view

    return {"added": [one(a) for a in result.added],
            "notAdded": [{"label": d.label, "reason": d.reason} for d in result.dropped]}


# -- check ----------------------------------------------------------------------------------


def check_lines(result: CheckResult, was_on: bool, now_on: bool, retry_seconds: float = 30 * 60) -> list[str]:
    """What a person reads after `check`; `retry_seconds`: the config's health.retryFailedSeconds."""
    lines = [result.headline]
    if result.stderr_tail:
        lines += ["  its stderr ends:", *(f"    {line}" for line in result.stderr_tail)]
    lines += [f"  warning: {w}" for w in result.warnings]
    if result.ok:
        lines.append(f"'{result.name}' is on.")
    elif result.outcome == "needs-values":
        lines.append(f"'{result.name}' stays off until they are filled: `omb-sidecar servers edit {result.name}`.")
    elif result.sign_in:
        lines.append(f"Sign in with `omb-sidecar signin {result.name}`; bots get '{result.name}' once it is signed in.")
    elif result.outcome == "not-allowed":
        lines.append(f"'{result.name}' stays as it is: bots do not get it.")
    elif was_on and now_on:
        every = period_words(retry_seconds)
        lines.append(f"'{result.name}' is left out of bots' tools until it passes; the HTTP front tries it again at "
                     f"start and every {every}; `omb-sidecar check {result.name}` tries it now.")
    else:
        lines.append(f"Saved, but off: the test failed. Bots can use '{result.name}' once it passes.")
    return lines


def check_json(result: CheckResult) -> dict[str, Any]:
    return {"outcome": result.outcome, "ok": result.ok, "headline": result.headline, "tools": result.tools,
            "reason": result.reason, "warnings": result.warnings, "signIn": result.sign_in,
            "stderr": result.stderr_tail}


# -- servers --------------------------------------------------------------------------------


def server_view(name: str, entry: dict[str, Any], *, state: str | None = None, reason: str = "",
                record: HealthRecord | None = None) -> dict[str, Any]:
    """One server by names only: no env or header value, credential arguments masked."""
    env = entry.get("env") if isinstance(entry.get("env"), dict) else {}
    headers = entry.get("headers") if isinstance(entry.get("headers"), dict) else {}
    args = entry.get("args") if isinstance(entry.get("args"), list) else []
    assert isinstance(env, dict) and isinstance(headers, dict) and isinstance(args, list)
    command = entry.get("command")
    view: dict[str, Any] = {
        "name": name,
        "state": state or ("off" if entry.get("enabled") is False else "on"),
        "kind": _KIND_WORDS.get(str(entry.get("type", "http" if "url" in entry else "stdio")), "unknown"),
        "env": sorted(map(str, env)),
        "headers": sorted(map(str, headers)),
        "needs": rules.missing_values(
            command if isinstance(command, str) else None, [str(a) for a in args],
            {str(k): str(v) for k, v in env.items()}, {str(k): str(v) for k, v in headers.items()},
        ),
    }
    if isinstance(entry.get("url"), str):
        view["url"] = entry["url"]
    else:
        view["command"] = command
        view["args"] = masked_args(args)
    if reason:
        view["reason"] = reason
    if record is not None:
        view["lastCheck"] = {"ok": record.ok, "outcome": record.outcome, "reason": record.reason,
                             "tools": record.tools, "checkedAt": record.checked_at}
    return view


def server_lines(name: str, entry: dict[str, Any], view: dict[str, Any]) -> list[str]:
    lines = [f"{name}: {view['state']}, {_where(entry)}"]
    if view.get("reason"):
        lines.append(f"  {view['reason']}")
    if view["env"]:
        lines.append("  env: " + ", ".join(view["env"]))
    if view["headers"]:
        lines.append("  headers: " + ", ".join(view["headers"]))
    if view["needs"]:
        lines.append("  needs a value: " + ", ".join(view["needs"]))
    last = view.get("lastCheck")
    if last:
        said = f"Connected: {last['tools']} tools" if last["ok"] else f"failed: {last['reason']}"
        lines.append(f"  last check: {said} ({_ago(last['checkedAt'])})")
    return lines


def _ago(moment: float) -> str:
    seconds = max(0, int(time.time() - moment))
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            return f"{seconds // size} {unit} ago"
    return "just now"
