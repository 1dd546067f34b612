"""`omb-sidecar import`: the MCP servers the engines on this machine already use.

Sources, each read from a home folder (`~` unless `--home DIR` names another):

  claude          Claude Code: the top-level `mcpServers` of `~/.claude.json` only (the
                  per-project blocks under `projects` are left alone); with no `--home`,
                  `$CLAUDE_CONFIG_DIR/.claude.json` when that is set, as Claude Code itself does
  claude-desktop  Claude Desktop: `~/.config/Claude/claude_desktop_config.json` (Linux) and
                  `~/Library/Application Support/Claude/claude_desktop_config.json` (macOS)
  cursor          Cursor: `~/.cursor/mcp.json`
  gemini          Gemini CLI: `~/.gemini/settings.json`
  codex           Codex: the `[mcp_servers.*]` tables of `~/.codex/config.toml`; with no
                  `--home`, `$CODEX_HOME/config.toml` when that is set, as Codex itself reads it

Owns where each engine keeps its servers, reading those files (JSON with comments and
trailing commas, or TOML), and the rules for servers that come from a home rather than a
paste: one already configured (same command and arguments, or same address) is left alone;
a different server under a name that is taken is skipped and named, never renumbered. Every
entry goes through the paste importer (`import_paste`): the same naming (`mcp-` before a
reserved name), the same blanking of variables (a Codex `bearer_token_env_var` becomes an
`Authorization` header that needs a value, never the variable's value), and it comes in off.

Refuses nothing silently: a file that cannot be read, and an entry that cannot be saved,
drop only themselves and are reported as failed with the reason. Writes nothing: the caller
saves what `import_homes` says came in.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sidecar.config import Organization, rules
from sidecar_admin import jsonish
from sidecar_admin.importer import Added, Dropped, ImportResult, import_paste
from sidecar_admin.views import import_lines, server_view

__all__ = ["Source", "SOURCES", "Skipped", "SourceResult", "import_homes", "choose_sources", "source_files",
           "result_lines", "result_json"]


@dataclass(frozen=True)
class Source:
    key: str  # what `--from` calls it
    label: str  # what the result calls it
    files: tuple[str, ...]  # relative to the home folder
    form: str = "json"  # "json": a top-level `mcpServers`; "toml": `[mcp_servers.*]`
    moved_by: tuple[str, str] | None = None  # (variable, file in it): where the engine itself looks when it is set


SOURCES: tuple[Source, ...] = (
    Source("claude", "Claude Code", (".claude.json",), moved_by=("CLAUDE_CONFIG_DIR", ".claude.json")),
    Source("claude-desktop", "Claude Desktop", (".config/Claude/claude_desktop_config.json",
                                                "Library/Application Support/Claude/claude_desktop_config.json")),
    Source("cursor", "Cursor", (".cursor/mcp.json",)),
    Source("gemini", "Gemini CLI", (".gemini/settings.json",)),
    Source("codex", "Codex", (".codex/config.toml",), form="toml", moved_by=("CODEX_HOME", "config.toml")),
)
_BY_KEY = {source.key: source for source in SOURCES}


@dataclass(frozen=True)
class Skipped:
    name: str
    reason: str

    def __str__(self) -> str:
        return f"'{self.name}': {self.reason}"


@dataclass
class SourceResult:
    """What one source gave: the files read, and per server what came in, was skipped or failed."""

    source: Source
    files: list[Path] = field(default_factory=list)
    added: list[Added] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    failed: list[Dropped] = field(default_factory=list)


class _Unreadable(Exception):
    """A source file that cannot be read at all: reported, and only it is dropped."""


def choose_sources(names: str | None) -> list[Source]:
    """`--from claude,codex` -> those sources, in the order given; None -> all of them."""
    if not names:
        return list(SOURCES)
    chosen: list[Source] = []
    for name in (n.strip().lower() for n in names.split(",") if n.strip()):
        if name not in _BY_KEY:
            known = ", ".join(_BY_KEY)
            raise ValueError(f"--from: there is no source '{name}' (known: {known})")
        if _BY_KEY[name] not in chosen:
            chosen.append(_BY_KEY[name])
    return chosen


def source_files(source: Source, home: Path, environ: Mapping[str, str], home_given: bool) -> list[Path]:
    """The files of a source that exist in `home`."""
    paths = [home / relative for relative in source.files]
    if source.moved_by is not None and not home_given:
        variable, name = source.moved_by
        if environ.get(variable):
            paths = [Path(environ[variable]).expanduser() / name]
    return [path for path in paths if path.is_file()]


def import_homes(
    home: Path,
    existing: Mapping[str, object],
    sources: Sequence[Source] = SOURCES,
    *,
    organization: Organization | None = None,
    environ: Mapping[str, str] | None = None,
    home_given: bool = True,
) -> list[SourceResult]:
    """Every server of `sources` in `home`, measured against the configured `existing`."""
    environ = os.environ if environ is None else environ
    taken = set(existing)
    known = {key: name for name, entry in existing.items() if (key := _identity(entry)) is not None}
    results = []
    for source in sources:
        result = SourceResult(source, source_files(source, home, environ, home_given))
        for path in result.files:
            _read_file(path, source, result, organization)
        _settle(result, taken, known)
        results.append(result)
    return results


def _read_file(path: Path, source: Source, result: SourceResult, organization: Organization | None) -> None:
    label = str(path)
    try:
        paste = _paste_of(path, source.form)
    except _Unreadable as problem:
        result.failed.append(Dropped(label, str(problem)))
        return
    if paste is None:
        return
    found = import_paste(paste, {}, organization)
    result.added += found.added
    for dropped in found.dropped:
        if dropped.reason.startswith("already here as"):  # the same server twice in one file
            result.skipped.append(Skipped(dropped.label.strip("'"), dropped.reason))
        else:
            result.failed.append(dropped)


def _paste_of(path: Path, form: str) -> str | None:
    """The file's servers as a paste for the importer, None when it holds none."""
    try:
        text = path.read_text(encoding="utf-8").lstrip("\ufeff")
    except (OSError, UnicodeDecodeError) as exc:
        raise _Unreadable(f"the file could not be read ({_why(exc)})") from None
    if form == "toml":
        try:
            block = tomllib.loads(text).get("mcp_servers")
        except tomllib.TOMLDecodeError as exc:
            raise _Unreadable(f"its TOML could not be read ({exc})") from None
        return text if _servers_block(block, "[mcp_servers]") else None
    try:
        document = jsonish.loads(text) if text.strip() else {}
    except jsonish.JSONProblem as exc:
        raise _Unreadable(f"its JSON could not be read ({exc})") from None
    if not isinstance(document, dict):
        raise _Unreadable("its JSON is not an object")
    block = document.get("mcpServers")
    return json.dumps({"mcpServers": block}) if _servers_block(block, "mcpServers") else None


def _servers_block(block: object, name: str) -> bool:
    if block is None:
        return False
    if not isinstance(block, dict):
        raise _Unreadable(f"its {name} is not a table of servers")
    return bool(block)


def _why(exc: Exception) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or type(exc).__name__
    return "it is not UTF-8 text"


def _settle(result: SourceResult, taken: set[str], known: dict[tuple[object, ...], str]) -> None:
    """Keep what is new; leave alone what is here already; skip what a taken name would hide."""
    kept: list[Added] = []
    for added in result.added:
        key = _identity(added.entry)
        if key is not None and key in known:
            result.skipped.append(Skipped(added.name, f"already here as '{known[key]}'"))
        elif added.name in taken:
            result.skipped.append(Skipped(added.name, f"the name '{added.name}' is taken by a different server"))
        else:
            kept.append(added)
            taken.add(added.name)
            if key is not None:
                known[key] = added.name
    result.added = kept


def _identity(entry: object) -> tuple[object, ...] | None:
    """The same server, whatever its name, env or headers: its command and arguments, or its address."""
    if not isinstance(entry, dict):
        return None
    url, command, args = entry.get("url"), entry.get("command"), entry.get("args") or []
    if isinstance(url, str) and url:
        return rules.mount_key(None, [], {}, None, url, {})
    if isinstance(command, str) and command and isinstance(args, list):
        return rules.mount_key(command, [str(a) for a in args], {}, None, None, {})
    return None


# -- the words -------------------------------------------------------------------------------


def result_lines(results: Sequence[SourceResult], home: Path, *, saved: bool) -> list[str]:
    """Per source: the files read, what came in, what was skipped and why, what failed."""
    lines: list[str] = []
    for result in results:
        if not result.files:
            lines.append(f"{result.source.label}: no config file ({', '.join(_shown(home / f, home) for f in result.source.files)})")
            continue
        lines.append(f"{result.source.label} ({', '.join(_shown(p, home) for p in result.files)}):")
        came_in = import_lines(ImportResult(added=result.added))
        if not saved:
            came_in = [line.replace("Added '", "Would add '", 1) for line in came_in]
        lines += [f"  {line}" for line in came_in if line != "Nothing to add."]
        lines += [f"  Skipped {skipped}" for skipped in result.skipped]
        lines += [f"  Failed {failed}" for failed in result.failed]
        if not (result.added or result.skipped or result.failed):
            lines.append("  no servers")
    added = sum(len(r.added) for r in results)
    if added and saved:
        lines.append(f"{added} came in, off: `omb-sidecar check NAME --config FILE` turns one on once it passes.")
    elif not saved:
        lines.append("Dry run: nothing was saved.")
    return lines


def _shown(path: Path, home: Path) -> str:
    try:
        return "~/" + str(path.relative_to(home))
    except ValueError:
        return str(path)


def result_json(results: Sequence[SourceResult], *, saved: bool) -> dict[str, Any]:
    """The same, as JSON: servers by names only, never a value."""
    return {"saved": saved, "sources": [{
        "source": r.source.key, "label": r.source.label, "files": [str(p) for p in r.files],
        "added": [{**server_view(a.name, a.entry), "needs": [str(n) for n in a.needs], "notes": a.notes}
                  for a in r.added],
        "skipped": [{"name": s.name, "reason": s.reason} for s in r.skipped],
        "failed": [{"label": d.label, "reason": d.reason} for d in r.failed],
    } for r in results]}
