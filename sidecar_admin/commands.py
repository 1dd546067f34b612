"""`omb-sidecar add | check | servers …`: the operations behind "Add server", "Test" and
the server list, on the config file named by `--config`.

  add [--no-check] [--json] [PASTE ...]    import a paste (or stdin); new entries come in off,
                                           and each one with nothing left to fill is checked
  import [--from A,B] [--home DIR] [--dry-run]   the servers of Claude Code, Claude Desktop,
                                           Cursor, Gemini CLI and Codex (`homes`); they come in off
  check [--json] NAME                      the bounded Test; a pass turns the entry on
  servers [list] [--json]                  every entry by names only, with its last check
  servers show NAME                        the edit form: the entry with env/header values blank
  servers edit NAME [--no-check]           read an entry from stdin; a blank value keeps the saved
                                           one, a missing name deletes it; then check it
  servers off NAME | remove NAME           park an entry | delete it and its saved keys
  servers health [--all] [--json]          run the checks that are due (or every one)
  servers review NAME [--json]             what changed in its tools since they were approved
  servers approve NAME [--tool T ...]      pin the definitions it lists now (or only those tools)
  signin NAME [--no-browser] [--paste]     sign a URL server in (OAuth, in a browser); then check it
  signout NAME                             revoke its tokens where the server offers it, then forget them

Exit codes: 0 done (and connected), 1 a check failed or nothing was added (for `import`:
a file or an entry failed, the rest came in), 2 a usage or config error. Everything
printed, and every log line, passes a redactor that holds every configured env and header
value.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from sidecar.trust.pins import Approval
from sidecar.config import parse_server
from sidecar.errors import ConfigError
from sidecar.logs import setup_logging
from sidecar.mounts.health import CheckResult
from sidecar.redact import Redactor
from sidecar_admin import approval, views
from sidecar_admin.health import recheck_due
from sidecar_admin.session import Session, add_paste_to_file, all_values, check_and_apply, say_each_line_once
from sidecar_admin.store import edit_form, merge_write_only

__all__ = ["main"]

log = logging.getLogger(__name__)


# -- the commands ---------------------------------------------------------------------------


def _add(session: Session) -> int:
    paste = " ".join(session.args.paste) if session.args.paste else sys.stdin.read()
    result = add_paste_to_file(session, paste)
    log.info("%s: %d entries added, %d not", session.file.path, len(result.added), len(result.dropped))
    if not session.args.json:
        session.say(views.import_lines(result))
    checks: dict[str, CheckResult] = {}
    if not session.args.no_check:
        for added in result.added:
            if not added.needs:
                checks[added.name] = check_and_apply(session, added.name, say=not session.args.json)
    if session.args.json:
        session.say_json(views.import_json(result, checks))
    return 0 if result.added else 1


def _import(session: Session) -> int:
    from sidecar_admin import homes

    try:
        sources = homes.choose_sources(session.args.sources)
    except ValueError as exc:
        raise ConfigError("", str(exc)) from None
    home = Path(session.args.home).expanduser() if session.args.home else Path.home()
    saved = not session.args.dry_run
    # a dry run only reads: no lock file, no folder, nothing written beside the config
    with session.file.edit() if saved else contextlib.nullcontext(session.file.read()) as document:
        servers = document.setdefault("mcpServers", {}) if saved else document.get("mcpServers", {})
        if not isinstance(servers, dict):
            raise ConfigError("mcpServers", "must be an object of alias -> server entry")
        results = homes.import_homes(home, dict(servers), sources, organization=session.config.organization,
                                     home_given=bool(session.args.home))
        added = [a for r in results for a in r.added]
        session.redactor.add(all_values({"mcpServers": {a.name: a.entry for a in added}}))
        if saved:
            servers.update((a.name, a.entry) for a in added)
    session.answer(homes.result_lines(results, home, saved=saved), homes.result_json(results, saved=saved))
    return 1 if any(r.failed for r in results) else 0


def _check(session: Session) -> int:
    # a person ran `check NAME`: what it lists now is what they approve (RELIABILITY.md rule 16)
    result = check_and_apply(session, session.args.name, approval=Approval(command="check", alias=session.args.name))
    return 0 if result.ok else 1


def _list(session: Session) -> int:
    health = session.health()
    records = health.load() if health is not None else {}
    skipped = dict(session.config.skipped)
    views_out: list[dict[str, Any]] = []
    lines: list[str] = []
    for name, entry in session.file.servers().items():
        entry = entry if isinstance(entry, dict) else {}
        state, reason = _state(name, entry, skipped)
        view = views.server_view(name, entry, state=state, reason=reason, record=records.get(name))
        _sign_in_words(session, name, entry, view, records)
        views_out.append(view)
        lines += views.server_lines(name, entry, view)
        lines += [f"  sign-in: {view['signIn']}"] if view.get("signIn") else []
        lines += [f"  redirect URI to register: {view['redirectUri']}"] if view.get("redirectUri") else []
    session.answer(lines or ["No servers are configured."], views_out)
    return 0


def _sign_in_words(session: Session, name: str, entry: dict[str, Any], view: dict[str, Any],
                   records: dict[str, Any]) -> None:
    if isinstance(entry.get("url"), str):
        from sidecar_admin.signin_cmd import sign_in_view

        record = records.get(name)
        view.update(sign_in_view(session, name, entry, bool(record and not record.ok and ("sign-in" in record.reason or "omb-sidecar signin" in record.reason))))


def _state(name: str, entry: dict[str, Any], skipped: dict[str, str]) -> tuple[str, str]:
    if name in skipped:
        managed = "approved list" in skipped[name]
        return ("managed" if managed else "not usable"), skipped[name]
    try:
        parse_server(name, entry)
    except ConfigError as exc:
        return "not usable", exc.message
    return ("off" if entry.get("enabled") is False else "on"), ""


def _show(session: Session) -> int:
    entry = session.file.servers().get(session.args.name)
    if not isinstance(entry, dict):
        raise ConfigError("", f"there is no server named '{session.args.name}'")
    form = edit_form(entry)
    health = session.health()
    _sign_in_words(session, session.args.name, entry, form, health.load() if health is not None else {})
    sys.stdout.write(session.redactor(json.dumps(form, indent=2)) + "\n")
    return 0


def _edit(session: Session) -> int:
    name = session.args.name
    try:
        edited = json.loads(sys.stdin.read())
    except json.JSONDecodeError as exc:
        raise ConfigError("", f"the entry on stdin is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(edited, dict):
        raise ConfigError("", "the entry on stdin must be a JSON object")
    with session.file.edit() as document:
        servers = document.get("mcpServers", {})
        saved = servers.get(name) if isinstance(servers, dict) else None
        if not isinstance(saved, dict):
            raise ConfigError("", f"there is no server named '{name}'")
        merged = merge_write_only(saved, edited)
        session.redactor.add(all_values({"mcpServers": {name: merged}}))
        parse_server(name, merged)  # the rules, before anything is written
        merged["enabled"] = False
        servers[name] = merged
    if saved.get("url") != merged.get("url"):
        _drop_tokens(session, saved)  # tokens belong to the address: a new one signs in afresh
    health = session.health()
    if health is not None:
        health.forget(name)
    session.answer([f"Saved '{name}': off until it passes a check."], {"name": name, "saved": True})
    if session.args.no_check:
        return 0
    return 0 if check_and_apply(session, name).ok else 1


def _off(session: Session) -> int:
    with session.file.edit() as document:
        entry = document.get("mcpServers", {}).get(session.args.name)
        if not isinstance(entry, dict):
            raise ConfigError("", f"there is no server named '{session.args.name}'")
        entry["enabled"] = False
    session.answer([f"'{session.args.name}' is off."], {"name": session.args.name, "enabled": False})
    return 0


def _remove(session: Session) -> int:
    with session.file.edit() as document:
        servers = document.get("mcpServers", {})
        if not isinstance(servers, dict) or session.args.name not in servers:
            raise ConfigError("", f"there is no server named '{session.args.name}'")
        gone = servers.pop(session.args.name)
    _drop_tokens(session, gone)
    health = session.health()
    if health is not None:
        health.forget(session.args.name)
    session.answer([f"Removed '{session.args.name}' and its saved keys."],
                   {"name": session.args.name, "removed": True})
    return 0


def _drop_tokens(session: Session, entry: object) -> None:
    """Forget the sign-in tokens of an entry's address (removed, or its address changed)."""
    url = entry.get("url") if isinstance(entry, dict) else None
    if isinstance(url, str):
        from sidecar_admin.signin_cmd import forget_address

        forget_address(session, url)


def _health(session: Session) -> int:
    if session.args.all:
        results = [check_and_apply(session, s.alias) for s in session.config.servers]
        return 0 if all(r.ok for r in results) else 1
    results = anyio.run(lambda: recheck_due(session.config))
    session.answer([f"{r.name}: {r.headline}" for r in results] or ["No check is due."],
                   [{**views.check_json(r), "name": r.name} for r in results])
    return 0 if all(r.ok for r in results) else 1


def _signin(session: Session) -> int:
    from sidecar_admin.signin_cmd import signin

    return signin(session)


def _signout(session: Session) -> int:
    from sidecar_admin.signin_cmd import signout

    return signout(session)


# -- argv -----------------------------------------------------------------------------------

Handler = Callable[[Session], int]
# Each command's `--help` ends with one example.
EXAMPLES = {
    "add": "omb-sidecar add --config sidecar.json 'npx -y @modelcontextprotocol/server-memory'",
    "import": "omb-sidecar import --config sidecar.json --from claude,codex --dry-run",
    "check": "omb-sidecar check memory --config sidecar.json",
    "servers": "omb-sidecar servers --config sidecar.json",
    "list": "omb-sidecar servers list --config sidecar.json --json",
    "show": "omb-sidecar servers show memory --config sidecar.json",
    "edit": "omb-sidecar servers edit memory --config sidecar.json < memory-entry.json",
    "off": "omb-sidecar servers off memory --config sidecar.json",
    "remove": "omb-sidecar servers remove memory --config sidecar.json",
    "health": "omb-sidecar servers health --all --config sidecar.json",
    "signin": "omb-sidecar signin notion --config sidecar.json --paste",
    "signout": "omb-sidecar signout notion --config sidecar.json",
}


def _example(word: str) -> dict[str, Any]:
    return {"epilog": f"example:\n  {EXAMPLES[word]}", "formatter_class": argparse.RawDescriptionHelpFormatter}


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    # SUPPRESS: an option given at either level of `servers ACTION` is kept, never reset
    common.add_argument("--config", default=argparse.SUPPRESS, help="the sidecar's JSON config file (required)")
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
    common.add_argument("--log-level", default=argparse.SUPPRESS, choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    parser = argparse.ArgumentParser(prog="omb-sidecar", description="Bring your own MCP servers.")
    words = parser.add_subparsers(dest="word", required=True)
    add = words.add_parser("add", parents=[common], help="import a paste (the arguments, or stdin)", **_example("add"))
    add.add_argument("--no-check", action="store_true", help="save the entries off without checking them")
    add.add_argument("paste", nargs=argparse.REMAINDER, help="the paste (options go before it); else stdin")
    add.set_defaults(handler=_add)
    imports = words.add_parser(
        "import", parents=[common], help="the servers your engines already use (they come in off)",
        description="Bring in the MCP servers of Claude Code (~/.claude.json), Claude Desktop,\n"
                    "Cursor (~/.cursor/mcp.json), Gemini CLI (~/.gemini/settings.json) and Codex\n"
                    "(~/.codex/config.toml). Each comes in off; one already here is left alone; a\n"
                    "different server under a taken name is skipped and named.",
        **_example("import"))
    imports.add_argument("--from", dest="sources", metavar="A,B",
                         help="claude, claude-desktop, cursor, gemini, codex (default: all)")
    imports.add_argument("--home", metavar="DIR", help="read the engines' files under DIR instead of ~")
    imports.add_argument("--dry-run", action="store_true", help="say what would come in; save nothing")
    imports.set_defaults(handler=_import)
    check = words.add_parser("check", parents=[common], help="the bounded Test of one server", **_example("check"))
    check.add_argument("name")
    check.set_defaults(handler=_check)
    servers = words.add_parser("servers", parents=[common], help="list, show, edit, park or remove servers",
                              **_example("servers"))
    servers.set_defaults(handler=_list)
    actions = servers.add_subparsers(dest="action")
    actions.add_parser("list", parents=[common], **_example("list")).set_defaults(handler=_list)
    for action, handler in (("show", _show), ("edit", _edit), ("off", _off), ("remove", _remove)):
        sub = actions.add_parser(action, parents=[common], **_example(action))
        sub.add_argument("name")
        sub.set_defaults(handler=handler)
        if action == "edit":
            sub.add_argument("--no-check", action="store_true")
    for word, help_words in (("signin", "sign a URL server in with a browser (OAuth)"),
                             ("signout", "revoke a URL server's tokens, then forget them")):
        sub = words.add_parser(word, parents=[common], help=help_words, **_example(word))
        sub.add_argument("name")
        if word == "signin":
            sub.add_argument("--no-browser", action="store_true", help="print the address; open no browser")
            sub.add_argument("--paste", action="store_true", help="paste the redirect URL (SSH, a Cloud box)")
        sub.set_defaults(handler=_signin if word == "signin" else _signout)
    health = actions.add_parser("health", parents=[common], help="run the checks that are due", **_example("health"))
    health.add_argument("--all", action="store_true", help="check every enabled server now")
    health.set_defaults(handler=_health)
    review = actions.add_parser("review", parents=[common], help="what changed in a server's tools since approval")
    review.add_argument("name")
    review.set_defaults(handler=approval.review)
    approve = actions.add_parser("approve", parents=[common], help="pin the tool definitions a server lists now")
    approve.add_argument("name")
    approve.add_argument("--tool", action="append", help="approve only this tool (repeatable)")
    approve.set_defaults(handler=approval.approve)
    for sub in (review, approve):
        sub.add_argument("--bot", help="a bot of the shared gateway (gateway.bots): its face's own pins")
    return parser


def main(argv: list[str]) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    args.json = getattr(args, "json", False)
    if not getattr(args, "config", None):
        parser.error("--config PATH is required")
    redactor = Redactor()
    setup_logging(getattr(args, "log_level", "WARNING"), redactor)
    say_each_line_once()
    try:
        session = Session(args, redactor)
        handler: Handler = args.handler
        return handler(session)
    except ConfigError as exc:
        sys.stderr.write(redactor(f"omb-sidecar: {exc.message}") + "\n")
        return 2
