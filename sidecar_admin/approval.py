"""`servers review` and `servers approve`: the one place a person's approval changes pins.

Owns the two commands (each starts the server as `check` does and reads what it lists
now) and their scope: the config's own face, or with `--bot ID` one bot of a shared
gateway, whose face keeps its pins in its own health file (`<data>/bots/<id>/`) and, with
`store.url`, under its own namespace. `approve` is the only maker of an `Approval` here
(`check`, the other act of a person, is in `sidecar_admin.commands`); nothing run by a
schedule or a face reaches this module.
"""

from __future__ import annotations

from typing import Any

import anyio

from sidecar.trust.pins import Approval
from sidecar.config import ServerConfig, SidecarConfig, parse_server
from sidecar.config.bots import for_bot
from sidecar.errors import ConfigError
from sidecar.mounts.health import CheckResult, HealthFile, health_file_for
from sidecar_admin import views
from sidecar_admin.check import check_server
from sidecar_admin.session import Session

__all__ = ["approve", "review"]


def _scope(session: Session) -> SidecarConfig:
    """The config of the face whose pins are meant: a gateway bot's with `--bot`."""
    wanted = getattr(session.args, "bot", None)
    if not wanted:
        return session.config
    bot = next((b for b in session.config.gateway.bots if b.id == wanted), None)
    if bot is None:
        known = ", ".join(b.id for b in session.config.gateway.bots) or "none"
        raise ConfigError("gateway.bots", f"there is no bot '{wanted}' (bots: {known})")
    return for_bot(session.config, bot)


def _server(session: Session, scope: SidecarConfig) -> ServerConfig:
    name = session.args.name
    if scope is not session.config:  # the bot's own values (perBot), as its face starts it
        found = next((s for s in scope.servers if s.alias == name), None)
        if found is None:
            raise ConfigError("", f"bot '{scope.bot.id}' has no server named '{name}'")
        return found
    entry = session.file.servers().get(name)
    if not isinstance(entry, dict):
        raise ConfigError("", f"there is no server named '{name}'")
    return parse_server(name, entry)


def _listed_now(session: Session, scope: SidecarConfig) -> tuple[ServerConfig, CheckResult, dict[str, Any]]:
    """Start the server as `check` does and read its tools, with the pins they are judged by."""
    server = _server(session, scope)
    health = health_file_for(scope)
    records = health.load() if health is not None else {}
    others = {alias: r.tool_names for alias, r in records.items() if r.ok and alias != server.alias}
    result = anyio.run(lambda: check_server(server, tool_cap=scope.budgets.tool_cap, others=others))
    record = records.get(server.alias)
    pins = record.pins if record is not None else None
    shared = _shared_pins(scope)
    if shared is not None:  # replicas share pins through store.url: judge by those
        pins = shared.load_pins(server.alias) or pins
    return server, result, {"pins": pins, "others": others, "health": health}


def _shared_pins(scope: SidecarConfig) -> Any:
    if not scope.store.url:
        return None
    from sidecar.trust.shared import cli_pins

    return cli_pins(scope)


def review(session: Session) -> int:
    from sidecar_admin.review import review_lines

    server, result, known = _listed_now(session, _scope(session))
    if not result.ok:
        session.answer([f"{server.alias}: {result.headline}"], {**views.check_json(result), "name": server.alias})
        return 1
    lines, changes = review_lines(server, result.definitions, known["pins"], known["others"])
    session.answer(lines, {"name": server.alias, "changes": changes})
    return 0


def approve(session: Session) -> int:
    from sidecar_admin.review import approved_pins

    scope = _scope(session)
    server, result, known = _listed_now(session, scope)
    health: HealthFile | None = known["health"]
    if not result.ok or health is None:
        words = result.headline if not result.ok else "the config was not read from a file"
        session.answer([f"{server.alias}: nothing approved: {words}"], {"name": server.alias, "approved": []})
        return 1
    only = session.args.tool or []
    pins, missing = approved_pins(result.definitions, known["pins"], only)
    if missing:
        raise ConfigError("", f"'{server.alias}' does not list {', '.join(repr(m) for m in missing)}")
    approval = Approval(command="servers approve", alias=server.alias)  # the one act that changes held pins
    health.save_pins(server, pins, approval)
    shared = _shared_pins(scope)
    if shared is not None and not shared.publish(server.alias, pins, approval):
        raise ConfigError("store.url", "the shared store did not answer: approved in the health file only, "
                                       "not for the other replicas; run the approval again")
    names = only or sorted(pins)
    session.answer([f"Approved {len(names)} tool definition{'' if len(names) == 1 else 's'} of '{server.alias}'."],
                   {"name": server.alias, "approved": names})
    return 0
